import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  eventCatalog,
  recordEvent,
  type EmittedEventType,
  type EventObjects,
  type EventSubjects,
  type EventType,
} from '../../src/modules/events/index.ts';
import { EventPayloadRegistry } from '../../src/modules/events/events.payloads.ts';
import { isId } from '../../src/platform/ids.ts';
import type { Ctx } from '../../src/platform/request-context.ts';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';
import { lastOutboxId, outboxSince, type EventRow } from '../support/db-state.ts';

// The event catalogue is a public contract (docs/partner-guide.md "Events"): one list, documented as it is, and
// every event the passes flows record is catalogued, in the envelope, with the V3 representation.

const app = useApp();

const DECIDED = [
  'issued_pass.created',
  'issued_pass.updated',
  'issued_pass.renewed',
  'issued_pass.expired',
  'booking.created',
  'booking.confirmed',
  'booking.cancelled',
  'booking.completed',
  'booking.rescheduled',
  'booking_session.created',
  'booking_session.expired',
  'access_code.created',
  'access_code.redeemed',
  'credits.purchased',
  'lookup.verified',
  'hosted_session.completed',
  'hosted_session.expired',
];

/** The partner guide's event table, row by row: type, data.object, recorded today, meaning. */
function documentedEvents(): string[][] {
  const readme = readFileSync(new URL('../../docs/partner-guide.md', import.meta.url), 'utf8');
  return [...readme.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \| `([a-z_]+)` \| (yes|planned) \| (.+) \|$/gm)].map((m) => m.slice(1));
}

describe('event catalogue', () => {
  it('lists each decided type once, and README documents exactly the catalogue', () => {
    const types = Object.keys(eventCatalog);
    expect(new Set(types).size).toBe(types.length);
    expect([...types].sort()).toEqual([...DECIDED].sort());
    for (const spec of Object.values(eventCatalog)) {
      expect(spec.object).toMatch(/^[a-z_]+$/);
      expect(spec.meaning.length).toBeGreaterThan(10);
    }
    const documented = documentedEvents();
    expect(documented.map(([type]) => type)).toEqual(types); // each once, in the catalogue's order
    expect(documented).toEqual(Object.entries(eventCatalog).map(([type, s]) => [type, s.object, s.emitted ? 'yes' : 'planned', s.meaning]));
  });
});

describe('event payloads (src/modules/events/events.payloads.ts)', () => {
  const booking = { schema: z.object({ object: z.literal('booking') }), present: () => ({ object: 'booking' as const }) };

  it('a type no module defined › recording it fails naming the type; the schema of data.object names every missing type', () => {
    const payloads = new EventPayloadRegistry();
    expect(() => payloads.present('booking.created', {}, new Date())).toThrow(/booking\.created: no payload is defined/);
    payloads.define({ 'booking.created': booking });
    expect(payloads.present('booking.created', {}, new Date())).toEqual({ object: 'booking' });
    expect(() => payloads.objectSchemas()).toThrow(/No payload defined for issued_pass\.created, .*booking\.confirmed/);
  });

  it('a type defined twice, or not catalogued › refused', () => {
    const payloads = new EventPayloadRegistry();
    payloads.define({ 'booking.created': booking });
    expect(() => payloads.define({ 'booking.created': booking })).toThrow(/booking\.created: its payload is defined twice/);
    expect(() => payloads.define({ ['booking.deleted' as 'booking.created']: booking })).toThrow(/not in the event catalogue/);
  });
});

/** What an outbox row must carry: the request that caused it and the representation it answered. */
interface Expected {
  requestId: string;
  type: EventType;
  object: unknown;
  idempotencyKey: string | null;
}

const restCall = async (r: TestReseller, path: string, body: unknown, idempotencyKey?: string) => {
  const res = await v3(app, path, { key: r.key, body, idempotencyKey });
  expect(res.status, res.text).toBeLessThan(300);
  return res;
};
const requestIdOf = (res: Reply) => res.headers.get('request-id')!;
const unix = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);

async function mutate(r: TestReseller, field: string, input: Record<string, unknown>, selection: string, idempotencyKey?: string) {
  const res = await gql(
    app,
    r.key,
    `mutation($input: ${field[0].toUpperCase()}${field.slice(1)}Input!) {
    ${field}(input: $input) { __typename ... on Error { code message } ${selection} } }`,
    { input },
    idempotencyKey ? { idempotencyKey } : {},
  );
  expect(res.body.errors, res.text).toBeUndefined();
  const payload = res.body.data[field];
  expect(payload.__typename, JSON.stringify(payload)).not.toMatch(/Error$/);
  return { res, payload };
}

describe('outbox rows of the passes flows', () => {
  it('REST and GraphQL › every row is a catalogued, recorded type in the event envelope with the V3 representation', async () => {
    app.clock.set(new Date('2027-05-10T09:00:00Z'));
    const reseller = await createReseller(app, { balance: 1_000_000 });
    const prepaid = await createPassPackage(app, reseller, { name: 'Prepaid', paymentModel: 'PREPAID', price: 3000 });
    const other = await createPassPackage(app, reseller, { name: 'Other', paymentModel: 'PAYG', price: 0 });
    const since = await lastOutboxId(app);
    const expected: Expected[] = [];
    const issuedPassNow = async (clientId: string) => (await v3(app, `/issued_passes/${clientId}`, { key: reseller.key })).body;

    // REST: each flow's response body is the representation its event carries.
    const issued = await restCall(
      reseller,
      '/issued_passes',
      { pass_id: prepaid.id, first_name: 'Ada', last_name: 'L', email: 'ada@example.com' },
      'ev-issue-1',
    );
    expected.push({ requestId: requestIdOf(issued), type: 'issued_pass.created', object: issued.body, idempotencyKey: 'ev-issue-1' });
    const clientId = issued.body.client_id;
    const updated = await restCall(reseller, '/issued_passes/update', { client_id: clientId, pass_id: other.id });
    expected.push({ requestId: requestIdOf(updated), type: 'issued_pass.updated', object: updated.body, idempotencyKey: null });
    // The same package again: 409 pass_unchanged, no event.
    expect((await v3(app, '/issued_passes/update', { key: reseller.key, body: { client_id: clientId, pass_id: other.id } })).status).toBe(
      409,
    );
    const back = await restCall(reseller, '/issued_passes/update', { client_id: clientId, pass_id: prepaid.id });
    expected.push({ requestId: requestIdOf(back), type: 'issued_pass.updated', object: back.body, idempotencyKey: null });
    const expiry = await restCall(reseller, `/issued_passes/${clientId}/expiry`, { expires_at: unix('2027-06-01T00:00:00Z') });
    expected.push({ requestId: requestIdOf(expiry), type: 'issued_pass.updated', object: expiry.body, idempotencyKey: null });
    const renewed = await restCall(reseller, `/issued_passes/${clientId}/renew`, {}, 'ev-renew-1');
    expected.push({ requestId: requestIdOf(renewed), type: 'issued_pass.renewed', object: renewed.body, idempotencyKey: 'ev-renew-1' });

    // GraphQL: the same use cases; the representation is what REST shows right after.
    const g = await mutate(
      reseller,
      'issuePass',
      { passId: prepaid.id, firstName: 'Grace', lastName: 'H', email: 'grace@example.com' },
      '... on IssuedPassPayload { issuedPass { client { id } } }',
      'ev-issue-2',
    );
    const gClient = g.payload.issuedPass.client.id;
    expected.push({
      requestId: requestIdOf(g.res),
      type: 'issued_pass.created',
      object: await issuedPassNow(gClient),
      idempotencyKey: 'ev-issue-2',
    });
    const gu = await mutate(
      reseller,
      'updateIssuedPass',
      { clientId: gClient, passId: other.id },
      '... on IssuedPassPayload { issuedPass { id } }',
    );
    expected.push({
      requestId: requestIdOf(gu.res),
      type: 'issued_pass.updated',
      object: await issuedPassNow(gClient),
      idempotencyKey: null,
    });
    const ge = await mutate(
      reseller,
      'setIssuedPassExpiry',
      { clientId: gClient, expiresAt: '2027-10-01T00:00:00Z' },
      '... on IssuedPassPayload { issuedPass { id } }',
    );
    expected.push({
      requestId: requestIdOf(ge.res),
      type: 'issued_pass.updated',
      object: await issuedPassNow(gClient),
      idempotencyKey: null,
    });
    const gb = await mutate(
      reseller,
      'updateIssuedPass',
      { clientId: gClient, passId: prepaid.id },
      '... on IssuedPassPayload { issuedPass { id } }',
    );
    expected.push({
      requestId: requestIdOf(gb.res),
      type: 'issued_pass.updated',
      object: await issuedPassNow(gClient),
      idempotencyKey: null,
    });
    const gr = await mutate(
      reseller,
      'renewIssuedPass',
      { clientId: gClient },
      '... on PassRenewal { amount currency previousExpiresAt newExpiresAt }',
      'ev-renew-2',
    );
    const renewal = gr.payload;
    expected.push({
      requestId: requestIdOf(gr.res),
      type: 'issued_pass.renewed',
      idempotencyKey: 'ev-renew-2',
      object: {
        object: 'pass_renewal',
        issued_pass: await issuedPassNow(gClient),
        amount: renewal.amount,
        currency: renewal.currency,
        previous_expires_at: unix(renewal.previousExpiresAt),
        new_expires_at: unix(renewal.newExpiresAt),
      },
    });

    // Numeric order: outboxSince sorts by its text id column, which puts row 10 before row 9.
    const rows = (await outboxSince(app, since)).sort((a, b) => Number(a.id) - Number(b.id));
    const byRequest = new Map(rows.map((r) => [(r.payload as { request?: { id: string } }).request?.id, r]));
    expect(rows.map((r) => [(r.payload as { request?: { id: string } }).request?.id, r.payload.type])).toEqual(
      expected.map((e) => [e.requestId, e.type]),
    );
    for (const e of expected) {
      const row = byRequest.get(e.requestId) as EventRow & { payload: Record<string, any> };
      const spec = eventCatalog[row.payload.type as EventType];
      expect(spec, `type ${row.payload.type} is catalogued`).toBeDefined();
      expect(spec.emitted).toBe(true);
      expect(row.topic).toBe('event');
      expect(row.reseller_id).toBe(reseller.id);
      expect(Object.keys(row.payload).sort()).toEqual(['created', 'data', 'id', 'object', 'request', 'type']);
      expect(isId('event', row.payload.id)).toBe(true);
      expect(row.payload).toMatchObject({
        object: 'event',
        created: unix('2027-05-10T09:00:00Z'),
        request: { id: e.requestId, idempotency_key: e.idempotencyKey },
      });
      expect(Object.keys(row.payload.data)).toEqual(['object']);
      expect(row.payload.data.object.object).toBe(spec.object);
      expect(row.payload.data.object).toEqual(e.object);
    }
  });
});

// Compile-time half of the contract, checked by `npm run typecheck` (never run): only a catalogued
// type that some use case records, with the domain result its module defined, and its payload.
async function _onlyCataloguedEvents(
  ctx: Ctx,
  issued: EventSubjects['issued_pass.created'],
  renewal: EventSubjects['issued_pass.renewed'],
  booking: EventSubjects['booking.created'],
) {
  expectTypeOf<EmittedEventType>().toEqualTypeOf<
    | 'issued_pass.created'
    | 'issued_pass.updated'
    | 'issued_pass.renewed'
    | 'issued_pass.expired'
    | 'booking.created'
    | 'booking.confirmed'
    | 'booking.cancelled'
    | 'booking.completed'
    | 'booking.rescheduled'
    | 'booking_session.created'
    | 'booking_session.expired'
    | 'credits.purchased'
    | 'access_code.created'
    | 'access_code.redeemed'
    | 'lookup.verified'
    | 'hosted_session.completed'
    | 'hosted_session.expired'
  >();
  await recordEvent(ctx, 'issued_pass.created', issued);
  await recordEvent(ctx, 'issued_pass.renewed', renewal);
  // @ts-expect-error an unknown type
  await recordEvent(ctx, 'issued_pass.deleted', issued);
  // @ts-expect-error the domain result of another type
  await recordEvent(ctx, 'issued_pass.created', booking);
  expectTypeOf<EventObjects['issued_pass.renewed']['issued_pass']>().toEqualTypeOf<EventObjects['issued_pass.created']>();
  expectTypeOf<EventObjects['booking.created']['object']>().toEqualTypeOf<'booking'>();
}
