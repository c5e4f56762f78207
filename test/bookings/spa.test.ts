import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, walletLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const spaBody = (extra: Record<string, unknown> = {}) => ({
  date: '2026-03-10',
  time: '10:00',
  spa_id: w.spa.id,
  service_ids: [w.spa.massage],
  client_id: w.client.id,
  ...extra,
});

describe('POST /bookings/spa › covered by the pass', () => {
  it('books now (PENDING), debits the services’ credits and answers spec 2.2 exactly', async () => {
    const before = await walletLedger(app, w.client.id);
    const outbox = await lastOutboxId(app);
    const res = await book.spa(app, w, spaBody({ service_ids: [w.spa.massage, w.spa.sauna] }));
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'booking_id',
        'copay_required',
        'created',
        'currency',
        'date',
        'message',
        'object',
        'provider_name',
        'scheduled_for',
        'service_name',
        'status',
        'time',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      object: 'spa_booking_initiation',
      copay_required: false,
      status: 'PENDING',
      date: '2026-03-10',
      time: '10:00',
      currency: 'EUR',
      service_name: 'Massage, Sauna',
      provider_name: 'Silver Spa',
      // 10:00 in Berlin (UTC+1 in March before the change) is 09:00Z
      scheduled_for: unix('2026-03-10T09:00:00Z'),
      created: unix('2026-03-02T08:00:00Z'),
    });
    expect(res.body.booking_id).toMatch(/^booking_/);
    const after = await walletLedger(app, w.client.id);
    expect(after.balance).toBe(before.balance - 40);
    expect(after.ledgerSum).toBe(after.balance);

    const booking = await v3(app, `/bookings/${res.body.booking_id}`, { key: w.reseller.key });
    expect(booking.status).toBe(200);
    expect(booking.body).toMatchObject({
      object: 'booking',
      id: res.body.booking_id,
      status: 'PENDING',
      type: 'spa',
      credits_charged: 40,
      visits_deducted: 0,
      client_id: w.client.id,
      provider_id: w.spa.id,
      service_ids: [w.spa.massage, w.spa.sauna],
    });
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => e.payload.type)).toEqual(['booking.created']);
    expect(events[0].payload.data.object).toEqual(booking.body);

    // The slot is taken for the whole 75 minutes: availability shows it, and a second booking is 409.
    const availability = await v3(app, `/spas/${w.spa.id}/availability?date=2026-03-10&service_ids=${w.spa.sauna}`, {
      key: w.reseller.key,
    });
    const taken = availability.body.slots.filter((s: { available: boolean }) => !s.available).map((s: { time: string }) => s.time);
    expect(taken).toEqual(['10:00', '10:15', '10:30', '10:45', '11:00']);
    const again = await book.spa(app, w, spaBody({ time: '10:30', service_ids: [w.spa.sauna] }));
    expectError(again, 409, 'slot_unavailable');
  });

  it("the spa's time zone or a service's duration changed since this process last booked there › the room checked at the instants the spa now gives: 409 when taken there", async () => {
    const v = await createBookingWorld(app);
    const clients = await Promise.all(
      ['ada', 'alan', 'grace', 'edsger', 'barbara'].map((name) => anotherClient(app, v, `${name}.moved@example.com`)),
    );
    const sauna = (clientId: string, time: string) => ({
      date: '2026-03-12',
      time,
      spa_id: v.spa.id,
      service_ids: [v.spa.sauna],
      client_id: clientId,
    });
    // 11:00 in Berlin: 10:00Z–10:15Z. This process now knows the spa as Berlin's, its sauna 15 minutes.
    expect((await book.spa(app, v, sauna(clients[0].id, '11:00'))).body).toMatchObject({
      status: 'PENDING',
      scheduled_for: unix('2026-03-12T10:00:00Z'),
    });
    await app.sql('update provider set timezone = ? where id = ?', ['Europe/London', v.spa.id]);
    // 10:00 would be 09:00Z in Berlin, free; in London it is 10:00Z, taken.
    let before = await dbState(app);
    expectError(await book.spa(app, v, sauna(clients[1].id, '10:00')), 409, 'slot_unavailable');
    await expectUnchanged(app, before);
    // 13:00 in London: 13:00Z–13:15Z. Then the sauna takes two hours: 11:15 runs into it.
    expect((await book.spa(app, v, sauna(clients[2].id, '13:00'))).body).toMatchObject({
      status: 'PENDING',
      scheduled_for: unix('2026-03-12T13:00:00Z'),
    });
    await app.sql('update spa_service set duration_minutes = 120 where id = ?', [v.spa.sauna]);
    before = await dbState(app);
    expectError(await book.spa(app, v, sauna(clients[3].id, '11:15')), 409, 'slot_unavailable');
    await expectUnchanged(app, before);
    // Where the room is free at the instants it now has, the booking goes through.
    expect((await book.spa(app, v, sauna(clients[4].id, '15:00'))).body).toMatchObject({
      status: 'PENDING',
      scheduled_for: unix('2026-03-12T15:00:00Z'),
    });
  });

  it('not enough credits › 400 insufficient_credits, nothing written', async () => {
    await app.sql('update client set credit_balance = 0 where id = ?', [w.client.id]);
    await app.sql('delete from credit_transaction where client_id = ?', [w.client.id]);
    const before = await dbState(app);
    const refused = await book.spa(app, w, spaBody({ time: '14:00' }));
    expectError(refused, 400, 'insufficient_credits');
    // The wallet row's trigger refused it, in the statement that carried the booking: its words.
    expect(refused.body.error.message).toBe('The client has 0 credits; 30 are needed');
    await expectUnchanged(app, before);
    // With an Idempotency-Key the refusal is stored in a transaction of its own and replayed.
    const keyed = await book.spa(app, w, spaBody({ time: '14:00' }), 'spa-no-credits-1');
    expectError(keyed, 400, 'insufficient_credits');
    const replay = await book.spa(app, w, spaBody({ time: '14:00' }), 'spa-no-credits-1');
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(keyed.text);
    // A wallet row moves the balance (its trigger): back to 500.
    await app.sql(
      `insert into credit_transaction (id, reseller_id, client_id, type, amount, description, created_at)
      values ('ctxn_01JTESTTOPUP0000000000000', ?, ?, 'CREDIT', 500, 'test top-up', now())`,
      [w.reseller.id, w.client.id],
    );
  });
});

describe('POST /bookings/spa › co-pay session, then confirm', () => {
  it('not covered but priced › a session (spec 2.2 fields), no booking, nothing debited', async () => {
    const ledger = await businessLedger(app, w.reseller.id);
    const res = await book.spa(
      app,
      w,
      spaBody({ spa_id: w.copaySpa.id, service_ids: [w.copaySpa.massage, w.copaySpa.sauna], time: '12:00' }),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      object: 'spa_booking_initiation',
      copay_required: true,
      status: 'AWAITING_COPAY',
      copay_amount: 6000,
      copay_credits: 40,
      currency: 'EUR',
      session_expires_at: unix('2026-03-03T08:00:00Z'),
      provider_name: 'Gold Spa',
    });
    expect(res.body).not.toHaveProperty('booking_id');
    expect(res.body.session_id).toMatch(/^sess_/);
    expect(await businessLedger(app, w.reseller.id)).toEqual(ledger);

    const confirm = await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, {
      key: w.reseller.key,
      method: 'POST',
      idempotencyKey: 'confirm-1',
    });
    expect(confirm.status, confirm.text).toBe(201);
    expect(confirm.body).toMatchObject({
      object: 'booking',
      status: 'PENDING',
      type: 'spa',
      copay_amount: 6000,
      credits_charged: 0,
      date: '2026-03-10',
      time: '12:00',
    });
    const after = await businessLedger(app, w.reseller.id);
    expect(after.balance).toBe(ledger.balance - 6000);
    expect(after.ledgerSum).toBe(after.balance);

    // The same key replays; another confirm is 409 and debits nothing.
    const replay = await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, {
      key: w.reseller.key,
      method: 'POST',
      idempotencyKey: 'confirm-1',
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(confirm.body);
    const second = await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' });
    expectError(second, 409, 'session_already_confirmed');
    expect(await businessLedger(app, w.reseller.id)).toEqual(after);
  });

  it('a session older than 24 hours › 422 session_expired, no debit', async () => {
    const res = await book.spa(app, w, spaBody({ spa_id: w.copaySpa.id, service_ids: [w.copaySpa.sauna], time: '15:00' }));
    app.clock.set(new Date('2026-03-03T08:00:00Z'));
    const before = await dbState(app);
    expectError(
      await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' }),
      422,
      'session_expired',
    );
    await expectUnchanged(app, before);
  });

  it('not enough balance › 422 insufficient_balance, nothing written', async () => {
    const res = await book.spa(app, w, spaBody({ spa_id: w.copaySpa.id, service_ids: [w.copaySpa.sauna], time: '16:00' }));
    const { balance } = await businessLedger(app, w.reseller.id);
    await app.sql('update business_account set balance = 100 where reseller_id = ?', [w.reseller.id]);
    const before = await dbState(app);
    expectError(
      await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' }),
      422,
      'insufficient_balance',
    );
    await expectUnchanged(app, before);
    await app.sql('update business_account set balance = ? where reseller_id = ?', [balance, w.reseller.id]);
  });

  it('the spa moved to another time zone since the session › the confirm checks the room at the instants the spa now gives: 409 when taken there', async () => {
    const v = await createBookingWorld(app);
    const other = await anotherClient(app, v, 'ada.lovelace@example.com');
    const massage = (clientId: string) => ({
      date: '2026-03-11',
      time: '10:00',
      spa_id: v.copaySpa.id,
      service_ids: [v.copaySpa.massage],
      client_id: clientId,
    });
    // 10:00 in Berlin: the session holds 09:00Z–10:00Z.
    const held = await book.spa(app, v, massage(v.client.id));
    expect(held.body).toMatchObject({ status: 'AWAITING_COPAY', scheduled_for: unix('2026-03-11T09:00:00Z') });
    await app.sql('update provider set timezone = ? where id = ?', ['Europe/London', v.copaySpa.id]);
    // 10:00 in London is 10:00Z: another client's appointment takes the one room 10:00Z–11:00Z.
    const taken = await book.spa(app, v, massage(other.id));
    expect(taken.body).toMatchObject({ status: 'AWAITING_COPAY', scheduled_for: unix('2026-03-11T10:00:00Z') });
    expect((await v3(app, `/bookings/spa/${taken.body.session_id}/confirm`, { key: v.reseller.key, method: 'POST' })).status).toBe(201);
    // The room is free at the session's own instants, but its 10:00 is now 10:00Z, which is taken.
    const before = await dbState(app);
    expectError(
      await v3(app, `/bookings/spa/${held.body.session_id}/confirm`, { key: v.reseller.key, method: 'POST' }),
      409,
      'slot_unavailable',
    );
    await expectUnchanged(app, before);
  });

  it('unknown or malformed session › 404', async () => {
    expectError(
      await v3(app, '/bookings/spa/sess_01JZZZZZZZZZZZZZZZZZZZZZZZ/confirm', { key: w.reseller.key, method: 'POST' }),
      404,
      'resource_not_found',
    );
    expectError(await v3(app, '/bookings/spa/nope/confirm', { key: w.reseller.key, method: 'POST' }), 404, 'resource_not_found');
  });
});

describe('POST /bookings/spa › refused', () => {
  it('neither covered nor priced › 403 provider_not_covered, nothing written', async () => {
    const before = await dbState(app);
    expectError(
      await book.spa(app, w, spaBody({ spa_id: w.closedSpa.id, service_ids: [w.closedSpa.service] })),
      403,
      'provider_not_covered',
    );
    await expectUnchanged(app, before);
  });

  it.each([
    ['date missing', { date: undefined }, 'date'],
    ['date not a day', { date: '2026-02-30' }, 'date'],
    ['time not HH:MM', { time: '9:00' }, 'time'],
    ['time not a quarter hour', { time: '10:05' }, 'time'],
    ['time outside opening hours', { time: '07:00' }, 'time'],
    ['in the past', { date: '2026-03-01' }, 'time'],
    ['no services', { service_ids: [] }, 'service_ids'],
    ['a service of another spa', { service_ids: ['svc_01JZZZZZZZZZZZZZZZZZZZZZZZ'] }, 'service_ids'],
    ['neither client_id nor user_pass_id', { client_id: undefined }, 'client_id'],
    ['a name that is not the client’s', { first_name: 'Bob' }, 'first_name'],
    ['an unknown field', { colour: 'red' }, 'colour'],
    ['NUL in spa_id', { spa_id: 'prov_\u0000' }, 'spa_id'],
  ])('%s › 400 naming %s, nothing written', async (_, extra, param) => {
    const before = await dbState(app);
    expectValidationError(await book.spa(app, w, spaBody(extra)), param as string);
    await expectUnchanged(app, before);
  });

  it('unknown spa, unknown or foreign client › 404 naming the field', async () => {
    expectError(await book.spa(app, w, spaBody({ spa_id: 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ' })), 404, 'resource_not_found', 'spa_id');
    expectError(
      await book.spa(app, w, spaBody({ client_id: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' })),
      404,
      'resource_not_found',
      'client_id',
    );
  });
});
