import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { v3 } from '../support/http.ts';

// Every field of every booking operation is checked: a wrong type or format is a 400 naming the
// field, and nothing is written (docs/partner-guide.md "Bookings"); no input answers 500.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
let instanceId: string;
let spaSession: string;
let classSession: string;
let bookingId: string;
beforeAll(async () => {
  w = await createBookingWorld(app);
  instanceId = (await instanceIn(app, w.gym.classId, 30)).id;
  spaSession = (
    await book.spa(app, w, {
      date: '2026-03-10',
      time: '10:00',
      spa_id: w.copaySpa.id,
      service_ids: [w.copaySpa.sauna],
      client_id: w.client.id,
    })
  ).body.session_id;
  classSession = (await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.copayGym.classId, 30)).id, client_id: w.client.id }))
    .body.session_id;
  bookingId = (await book.cls(app, w, { class_instance_id: instanceId, client_id: w.client.id })).body.booking_id;
});

const wrongTypes = [42, true, null, { a: 1 }, ['x'], '', 'x'.repeat(300), 'a\u0000b'];

const operations = () => [
  {
    path: '/bookings/spa',
    valid: {
      date: '2026-03-11',
      time: '10:00',
      spa_id: w.spa.id,
      service_ids: [w.spa.sauna],
      client_id: w.client.id,
      user_pass_id: w.client.issuedPassId,
      first_name: 'Ada',
      last_name: 'Lovelace',
    },
    fields: ['date', 'time', 'spa_id', 'service_ids', 'client_id', 'user_pass_id', 'first_name', 'last_name'],
  },
  {
    path: '/bookings/class',
    valid: {
      class_instance_id: instanceId,
      client_id: w.client.id,
      user_pass_id: w.client.issuedPassId,
      first_name: 'Ada',
      last_name: 'Lovelace',
    },
    fields: ['class_instance_id', 'client_id', 'user_pass_id', 'first_name', 'last_name'],
  },
  { path: `/bookings/class/${classSession}/confirm`, valid: { copay_package_id: w.copayGym.optionId }, fields: ['copay_package_id'] },
  { path: `/bookings/${bookingId}/reschedule`, valid: { class_instance_id: instanceId }, fields: ['class_instance_id'] },
];

describe('booking operations › each field with a wrong type or format', () => {
  it('answers 400 naming the field and writes nothing', async () => {
    for (const op of operations()) {
      for (const field of op.fields) {
        for (const value of wrongTypes) {
          // An empty array is a valid type for service_ids but not a valid list; '' and long text are invalid ids.
          const before = await dbState(app);
          const res = await v3(app, op.path, { key: w.reseller.key, body: { ...op.valid, [field]: value } });
          const expected = field === 'service_ids' && Array.isArray(value) ? 'service_ids' : field;
          if (res.status === 404) {
            // A well-formed but unknown id is not found (naming the field), never written either.
            expect(res.body.error.param, `${op.path} ${field}=${JSON.stringify(value)}`).toBe(field);
          } else {
            expect(res.status, `${op.path} ${field}=${JSON.stringify(value)}: ${res.text}`).toBe(400);
            expect(res.body.error.param, `${op.path} ${field}=${JSON.stringify(value)}`).toBe(expected);
          }
          await expectUnchanged(app, before);
        }
      }
    }
  }, 120_000);

  it('the spa confirm takes no body; confirms of unknown sessions are 404', async () => {
    expectValidationError(await v3(app, `/bookings/spa/${spaSession}/confirm`, { key: w.reseller.key, body: { x: 1 } }), 'body');
  });
});

describe('booking operations › arbitrary JSON bodies', () => {
  it('never answer 5xx and never write on a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations().map((o) => o.path)),
        fc.dictionary(
          fc.constantFrom(
            'date',
            'time',
            'spa_id',
            'service_ids',
            'client_id',
            'class_instance_id',
            'number_of_visits',
            'duration',
            'copay_package_id',
            'x',
          ),
          fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 })),
        ),
        async (path, body) => {
          const before = await dbState(app);
          const res = await v3(app, path, { key: w.reseller.key, body });
          expect(res.status, res.text).toBeLessThan(500);
          if (res.status >= 400) await expectUnchanged(app, before);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});
