import { beforeAll, describe, expect, it } from 'vitest';
import { expireAccessCodes } from '../../src/modules/access-codes/index.ts';
import { expireBookingSessions } from '../../src/modules/bookings/index.ts';
import { newId } from '../../src/platform/ids.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { confirmCode, createCode } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// POST /access-codes/{session_id}/confirm (docs/partner-guide.md "Access codes"): the class confirm's bodies and
// purchase, one transaction that debits, grants, makes the code and uses the session; refusals
// change nothing. Access-code sessions are booking sessions: the session sweep expires them.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

let clients = 0;
/** A new client of the world whose March gym visits are used up, with the ledger rows that say so. */
async function usedUpClient() {
  const client = await anotherClient(app, w, `confirm${++clients}@example.com`);
  await app.sql(`update issued_pass set visits_used = '{"GYM": 8}', visits_period = '2026-03' where id = ?`, [client.issuedPassId]);
  await app.sql(
    `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
                 values (?, ?, ?, ?, 'GYM', '2026-03', 8, 'BOOKING', ?)`,
    [newId('visitTransaction'), w.reseller.id, client.id, client.issuedPassId, app.clock.now()],
  );
  return client;
}

async function extraVisitsSession(body: Record<string, unknown> = { provider_id: w.gym.id }) {
  const client = await usedUpClient();
  const res = await createCode(app, w, { client_id: client.id, ...body });
  expect(res.body.additional_visits_required, res.text).toBe(true);
  return { client, sessionId: res.body.session_id as string };
}

async function copaySession() {
  const client = await anotherClient(app, w, `copay${++clients}@example.com`);
  const res = await createCode(app, w, { client_id: client.id, provider_id: w.copayGym.id });
  expect(res.body.copay_required, res.text).toBe(true);
  return { client, sessionId: res.body.session_id as string };
}

describe('confirm › an extra-visits session', () => {
  it('takes {number_of_visits, duration}: debits cost_per_visit × n and answers the code holding one of them', async () => {
    const { client, sessionId } = await extraVisitsSession({}); // a code for any gym: the session has no provider
    const ledger = await businessLedger(app, w.reseller.id);
    const outbox = await lastOutboxId(app);
    const res = await confirmCode(app, w, sessionId, { number_of_visits: 3, duration: 'ANNUALLY' }, 'confirm-1');
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      object: 'access_code',
      client_id: client.id,
      provider_id: null,
      status: 'ACTIVE',
      expires_at: unix('2026-03-03T00:00:00Z'),
      code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{8}$/),
      qr_code: expect.stringMatching(/^data:image\/png;base64,/),
    });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 3000);
    const [debit] = await app.sql(
      'select amount::int as amount, reference_id from business_transaction where reseller_id = ? order by id desc limit 1',
      [w.reseller.id],
    );
    expect(debit).toEqual({ amount: 3000, reference_id: res.body.id });
    const [entitlement] = await app.sql<Record<string, any>>(
      'select kind, category, provider_id, visits_total, visits_used, amount_paid::int as paid, session_id, valid_until from visit_entitlement where client_id = ?',
      [client.id],
    );
    expect(entitlement).toMatchObject({
      kind: 'EXTRA_VISITS',
      category: 'GYM',
      provider_id: null,
      visits_total: 3,
      visits_used: 1,
      paid: 3000,
      session_id: null,
    });
    expect(new Date(entitlement.valid_until).toISOString()).toBe('2027-03-02T08:00:00.000Z');
    const [row] = await app.sql('select session_id, visit_entitlement_id, visit_period from access_code where id = ?', [res.body.id]);
    expect(row).toEqual({ session_id: sessionId, visit_entitlement_id: expect.stringMatching(/^vent_/), visit_period: null });
    expect((await app.sql('select status from access_code_session where id = ?', [sessionId]))[0].status).toBe('CONFIRMED');
    expect((await outboxSince(app, outbox)).map((e) => e.payload.type)).toEqual(['access_code.created']);

    // The same key replays the code; another confirm of the session is 409 and debits nothing.
    const replay = await confirmCode(app, w, sessionId, { number_of_visits: 3, duration: 'ANNUALLY' }, 'confirm-1');
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(res.body);
    const before = await dbState(app);
    expectError(await confirmCode(app, w, sessionId, { number_of_visits: 3, duration: 'ANNUALLY' }), 409, 'session_already_confirmed');
    await expectUnchanged(app, before);
  });

  it('a co-pay field, or a bad number or duration › 400 naming it; nothing written', async () => {
    const { sessionId } = await extraVisitsSession();
    const before = await dbState(app);
    expectValidationError(await confirmCode(app, w, sessionId, { copay_package_id: w.copayGym.optionId }), 'copay_package_id');
    expectValidationError(
      await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY', copay_package_id: w.copayGym.optionId }),
      'copay_package_id',
    );
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 0, duration: 'MONTHLY' }), 'number_of_visits');
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 51, duration: 'MONTHLY' }), 'number_of_visits');
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 1.5, duration: 'MONTHLY' }), 'number_of_visits');
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'WEEKLY' }), 'duration');
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 1 }), 'duration');
    expectValidationError(await confirmCode(app, w, sessionId, {}), 'number_of_visits');
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY', seats: 1 }), 'seats');
    await expectUnchanged(app, before);
    expect((await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY' })).status).toBe(201);
  });

  it('the business account cannot pay › 422 insufficient_balance, nothing debited or made', async () => {
    const poor = await createBookingWorld(app, { balance: 500 });
    const client = await anotherClient(app, poor, 'poor@example.com');
    await app.sql(`update issued_pass set visits_used = '{"GYM": 8}', visits_period = '2026-03' where id = ?`, [client.issuedPassId]);
    const res = await createCode(app, poor, { client_id: client.id, provider_id: poor.gym.id });
    const before = await dbState(app);
    expectError(
      await confirmCode(app, poor, res.body.session_id, { number_of_visits: 1, duration: 'MONTHLY' }),
      422,
      'insufficient_balance',
    );
    await expectUnchanged(app, before);
  });
});

describe('confirm › a co-pay session', () => {
  it('takes {copay_package_id}: debits the option and answers the code at that provider', async () => {
    const { client, sessionId } = await copaySession();
    const ledger = await businessLedger(app, w.reseller.id);
    const res = await confirmCode(app, w, sessionId, { copay_package_id: w.copayGym.optionId });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'access_code', client_id: client.id, provider_id: w.copayGym.id });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 2500);
    const [entitlement] = await app.sql(
      'select kind, provider_id, copay_option_id, visits_total, visits_used from visit_entitlement where client_id = ?',
      [client.id],
    );
    expect(entitlement).toEqual({
      kind: 'COPAY',
      provider_id: w.copayGym.id,
      copay_option_id: w.copayGym.optionId,
      visits_total: 3,
      visits_used: 1,
    });
  });

  it('an extra-visits field, an option it did not offer or none › 400 naming it; nothing written', async () => {
    const { sessionId } = await copaySession();
    const before = await dbState(app);
    expectValidationError(await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY' }), 'number_of_visits');
    expectValidationError(await confirmCode(app, w, sessionId, { duration: 'MONTHLY' }), 'duration');
    expectValidationError(
      await confirmCode(app, w, sessionId, { copay_package_id: 'copay_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      'copay_package_id',
    );
    expectValidationError(await confirmCode(app, w, sessionId, {}), 'copay_package_id');
    await expectUnchanged(app, before);
  });
});

describe('confirm › sessions that cannot be confirmed', () => {
  it('unknown, another reseller’s, or a booking’s session › 404; a session past 24 hours › 422 session_expired', async () => {
    const { sessionId } = await extraVisitsSession();
    const other = await createBookingWorld(app);
    const before = await dbState(app);
    expectError(
      await confirmCode(app, w, 'sess_01JZZZZZZZZZZZZZZZZZZZZZZZ', { number_of_visits: 1, duration: 'MONTHLY' }),
      404,
      'resource_not_found',
    );
    expectError(await confirmCode(app, w, 'nonsense', { number_of_visits: 1, duration: 'MONTHLY' }), 404, 'resource_not_found');
    expectError(await confirmCode(app, other, sessionId, { number_of_visits: 1, duration: 'MONTHLY' }), 404, 'resource_not_found');
    // The booking confirm does not take an access-code session, nor this one a booking's.
    expectError(
      await v3(app, `/bookings/class/${sessionId}/confirm`, { key: w.reseller.key, body: { number_of_visits: 1, duration: 'MONTHLY' } }),
      404,
      'resource_not_found',
    );
    await expectUnchanged(app, before);
    const spa = await v3(app, '/bookings/spa', {
      key: w.reseller.key,
      body: { date: '2026-03-10', time: '10:00', spa_id: w.copaySpa.id, service_ids: [w.copaySpa.sauna], client_id: w.client.id },
    });
    const afterSpa = await dbState(app);
    expectError(await confirmCode(app, w, spa.body.session_id, {}), 404, 'resource_not_found');
    await expectUnchanged(app, afterSpa);

    app.clock.set(new Date('2026-03-03T08:00:00Z')); // 24 hours on
    const stale = await dbState(app);
    expectError(await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY' }), 422, 'session_expired');
    await expectUnchanged(app, stale);
  });

  it('the access-code sweep marks sessions past 24 hours EXPIRED (the bookings sweep leaves them be); the confirm answers 422 either way', async () => {
    const { sessionId } = await extraVisitsSession({});
    app.clock.set(new Date('2026-03-02T20:00:00Z'));
    const young = (await copaySession()).sessionId;
    app.clock.set(new Date('2026-03-03T08:00:00Z'));
    const outbox = await lastOutboxId(app);
    const log = createLogger({ LOG_LEVEL: 'silent' });
    await expireBookingSessions(app.orm.em, { clock: app.clock, config: app.config, log });
    expect((await app.sql('select status from access_code_session where id = ?', [sessionId]))[0].status).toBe('OPEN');
    expectError(await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY' }), 422, 'session_expired');

    expect((await expireAccessCodes(app.orm.em, { clock: app.clock })).sessionsExpired).toBeGreaterThanOrEqual(1);
    const statuses = await app.sql('select id, status from access_code_session where id in (?, ?) order by id', [sessionId, young]);
    expect(statuses).toEqual([
      { id: sessionId, status: 'EXPIRED' },
      { id: young, status: 'OPEN' },
    ]);
    expect((await outboxSince(app, outbox)).filter((e) => JSON.stringify(e).includes(sessionId))).toEqual([]);
    expectError(await confirmCode(app, w, sessionId, { number_of_visits: 1, duration: 'MONTHLY' }), 422, 'session_expired');
    expect((await expireAccessCodes(app.orm.em, { clock: app.clock })).sessionsExpired).toBe(0);
  });
});
