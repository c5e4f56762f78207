import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCode, providerKey, redeem, provider } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { v3 } from '../support/http.ts';

// Every field of every access-code operation is checked: a wrong type or format is a 400 naming the
// field and nothing is written (docs/partner-guide.md "Access codes"); no input answers 500.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
let passcode: string;
let extraSession: string;
let copaySession: string;
let gymKey: string;
beforeAll(async () => {
  w = await createBookingWorld(app);
  gymKey = await providerKey(app, w.gym.id);
  [{ passcode }] = await app.sql<{ passcode: string }>('select passcode from issued_pass where id = ?', [w.client.issuedPassId]);
  copaySession = (await createCode(app, w, { client_id: w.client.id, provider_id: w.copayGym.id })).body.session_id;
  await app.sql(`update issued_pass set visits_used = '{"GYM": 8}', visits_period = '2026-03' where id = ?`, [w.client.issuedPassId]);
  extraSession = (await createCode(app, w, { client_id: w.client.id, provider_id: w.gym.id })).body.session_id;
  expect(copaySession).toMatch(/^sess_/);
  expect(extraSession).toMatch(/^sess_/);
});

const wrongTypes = [4200, true, null, { a: 1 }, ['x'], '', 'x'.repeat(300), 'a\u0000b'];

const operations = () => [
  {
    path: '/access-codes',
    valid: { pass_code: passcode, client_id: w.client.id, provider_id: w.gym.id },
    fields: ['pass_code', 'client_id', 'provider_id'],
  },
  {
    path: `/access-codes/${extraSession}/confirm`,
    valid: { number_of_visits: 1, duration: 'MONTHLY' },
    fields: ['number_of_visits', 'duration'],
  },
  { path: `/access-codes/${copaySession}/confirm`, valid: { copay_package_id: w.copayGym.optionId }, fields: ['copay_package_id'] },
];

describe('access-code operations › each field with a wrong type or format', () => {
  it('answers 400 naming the field (404 naming it for a well-formed unknown id) and writes nothing', async () => {
    for (const op of operations()) {
      for (const field of op.fields) {
        for (const value of wrongTypes) {
          const before = await dbState(app);
          const res = await v3(app, op.path, { key: w.reseller.key, body: { ...op.valid, [field]: value } });
          const what = `${op.path} ${field}=${JSON.stringify(value)}: ${res.text}`;
          if (res.status === 404) expect(res.body.error.param, what).toBe(field);
          else {
            expect(res.status, what).toBe(400);
            expect(res.body.error.param, what).toBe(field);
          }
          await expectUnchanged(app, before);
        }
      }
    }
    for (const value of wrongTypes) {
      const before = await dbState(app);
      const res = await provider(app, '/access-codes/redeem', { key: gymKey, body: { code: value } });
      expectValidationError(res, 'code');
      await expectUnchanged(app, before);
    }
  }, 120_000);

  it('neither client_id nor pass_code › 400 on client_id; an unknown field › 400 naming it', async () => {
    const before = await dbState(app);
    expectValidationError(await createCode(app, w, {}), 'client_id');
    expectValidationError(await createCode(app, w, { provider_id: w.gym.id }), 'client_id');
    expectValidationError(await createCode(app, w, { client_id: w.client.id, user_pass_id: w.client.issuedPassId }), 'user_pass_id');
    expectValidationError(await createCode(app, w, { client_id: w.client.id, first_name: 'Ada' }), 'first_name');
    expectValidationError(await createCode(app, w, { client_id: w.client.id, pass_code: 'ABCD-123' }), 'pass_code');
    await expectUnchanged(app, before);
  });
});

describe('access-code operations › arbitrary JSON bodies', () => {
  it('never answer 5xx and never write on a 4xx', async () => {
    const paths = [...operations().map((o) => o.path), 'redeem'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths),
        fc.dictionary(
          fc.constantFrom('pass_code', 'client_id', 'provider_id', 'number_of_visits', 'duration', 'copay_package_id', 'code', 'x'),
          fc.oneof(
            fc.string(),
            fc.integer(),
            fc.boolean(),
            fc.constant(null),
            fc.array(fc.string(), { maxLength: 3 }),
            fc.constantFrom(passcode, w.client.id, w.gym.id, 'MONTHLY', 'AC1.e30.AAAA', 'ABCDEFGH'),
          ),
        ),
        async (path, body) => {
          const before = await dbState(app);
          const res =
            path === 'redeem' ? await redeem(app, gymKey, body.code as string) : await v3(app, path, { key: w.reseller.key, body });
          expect(res.status, res.text).toBeLessThan(500);
          if (res.status >= 400) await expectUnchanged(app, before);
        },
      ),
      { numRuns: 80 },
    );
  }, 120_000);
});
