import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, walletLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// The Silver Spa and the gyms of the world allow free cancellation up to 24 hours before the start
// and refund 50% later (test/support/catalog.ts defaults).
const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const cancel = (id: string) => v3(app, `/bookings/${id}/cancel`, { key: w.reseller.key, method: 'POST' });
const visits = async (issuedPassId: string) =>
  (await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [issuedPassId]))[0]
    .visits_used.GYM ?? 0;
const spots = async (id: string) =>
  (await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [id]))[0].spots_taken;

describe('POST /bookings/{id}/cancel › refunds by the provider’s policy', () => {
  it('a spa booking more than 24 h ahead › FULL: credits back, slot free, booking.cancelled', async () => {
    const wallet = await walletLedger(app, w.client.id);
    const booked = await book.spa(app, w, {
      date: '2026-03-10',
      time: '10:00',
      spa_id: w.spa.id,
      service_ids: [w.spa.massage],
      client_id: w.client.id,
    });
    const outbox = await lastOutboxId(app);
    const res = await cancel(booked.body.booking_id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      object: 'booking',
      status: 'CANCELLED',
      refund: { policy: 'FULL', credits_refunded: 30, visits_restored: 0, copay_refunded: 0, currency: 'EUR' },
    });
    expect(await walletLedger(app, w.client.id)).toEqual(wallet);
    expect((await outboxSince(app, outbox)).map((e) => e.payload.type)).toEqual(['booking.cancelled']);
    // The slot is free again.
    const again = await book.spa(app, w, {
      date: '2026-03-10',
      time: '10:00',
      spa_id: w.spa.id,
      service_ids: [w.spa.massage],
      client_id: w.client.id,
    });
    expect(again.status, again.text).toBe(201);
    await cancel(again.body.booking_id);
  });

  it('a co-pay spa booking less than 24 h ahead › LATE: 50% of the co-pay back, nothing else', async () => {
    const session = await book.spa(app, w, {
      date: '2026-03-02',
      time: '17:00',
      spa_id: w.copaySpa.id,
      service_ids: [w.copaySpa.massage],
      client_id: w.client.id,
    });
    const confirmed = await v3(app, `/bookings/spa/${session.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' });
    expect(confirmed.status, confirmed.text).toBe(201);
    const ledger = await businessLedger(app, w.reseller.id);
    const res = await cancel(confirmed.body.id);
    expect(res.body.refund).toEqual({ policy: 'LATE', credits_refunded: 0, visits_restored: 0, copay_refunded: 2250, currency: 'EUR' });
    const after = await businessLedger(app, w.reseller.id);
    expect(after.balance).toBe(ledger.balance + 2250);
    expect(after.ledgerSum).toBe(after.balance);
  });

  it('a class booking › FULL gives the visit back and frees the spot; LATE keeps the visit', async () => {
    const client = await anotherClient(app, w, 'cancel-class@example.com');
    const early = await instanceIn(app, w.gym.classId, 48);
    const late = await instanceIn(app, w.gym.classId, 5);
    const a = await book.cls(app, w, { class_instance_id: early.id, client_id: client.id });
    const b = await book.cls(app, w, { class_instance_id: late.id, client_id: client.id });
    expect(await visits(client.issuedPassId)).toBe(2);
    expect((await cancel(a.body.booking_id)).body.refund).toMatchObject({ policy: 'FULL', visits_restored: 1 });
    expect(await visits(client.issuedPassId)).toBe(1);
    expect(await spots(early.id)).toBe(0);
    expect((await cancel(b.body.booking_id)).body.refund).toMatchObject({ policy: 'LATE', visits_restored: 0 });
    expect(await visits(client.issuedPassId)).toBe(1);
    expect(await spots(late.id)).toBe(0);
  });
});

describe('POST /bookings/{id}/cancel › refused', () => {
  it('already cancelled › 409 already_cancelled and nothing changes, even with another Idempotency-Key', async () => {
    const instance = await instanceIn(app, w.gym.classId, 30);
    const booked = await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id });
    await cancel(booked.body.booking_id);
    const before = await dbState(app);
    expectError(await cancel(booked.body.booking_id), 409, 'already_cancelled');
    const keyed = await v3(app, `/bookings/${booked.body.booking_id}/cancel`, {
      key: w.reseller.key,
      method: 'POST',
      idempotencyKey: 'k1',
    });
    expectError(keyed, 409, 'already_cancelled');
    await expectUnchanged(app, before);
  });

  it('a booking that has started › 409 not_cancellable', async () => {
    const instance = await instanceIn(app, w.gym.classId, 2);
    const booked = await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id });
    app.clock.set(new Date(instance.startsAt.getTime() + 60_000));
    const before = await dbState(app);
    expectError(await cancel(booked.body.booking_id), 409, 'not_cancellable');
    await expectUnchanged(app, before);
  });

  it('unknown, malformed or another reseller’s booking › 404', async () => {
    const other = await createBookingWorld(app);
    const instance = await instanceIn(app, other.gym.classId, 30);
    const theirs = await book.cls(app, other, { class_instance_id: instance.id, client_id: other.client.id });
    expectError(await cancel(theirs.body.booking_id), 404, 'resource_not_found');
    expectError(await cancel('booking_01JZZZZZZZZZZZZZZZZZZZZZZZ'), 404, 'resource_not_found');
    expectError(await cancel('x'), 404, 'resource_not_found');
  });
});
