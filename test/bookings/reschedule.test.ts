import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { createClass } from '../support/catalog.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, walletLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const reschedule = (id: string, body: Record<string, unknown>, idempotencyKey?: string) =>
  v3(app, `/bookings/${id}/reschedule`, { key: w.reseller.key, body, idempotencyKey });

describe('POST /bookings/{id}/reschedule', () => {
  it('a spa appointment › the old one RESCHEDULED, a new PENDING one, linked, nothing charged again', async () => {
    const booked = await book.spa(app, w, {
      date: '2026-03-10',
      time: '10:00',
      spa_id: w.spa.id,
      service_ids: [w.spa.massage],
      client_id: w.client.id,
    });
    const wallet = await walletLedger(app, w.client.id);
    const outbox = await lastOutboxId(app);
    const res = await reschedule(booked.body.booking_id, { date: '2026-03-11', time: '14:00' }, 'move-1');
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'PENDING',
      date: '2026-03-11',
      time: '14:00',
      credits_charged: 30,
      rescheduled_from: booked.body.booking_id,
    });
    const old = await v3(app, `/bookings/${booked.body.booking_id}`, { key: w.reseller.key });
    expect(old.body).toMatchObject({ status: 'RESCHEDULED', rescheduled_to: res.body.id });
    expect(await walletLedger(app, w.client.id)).toEqual(wallet);
    expect((await outboxSince(app, outbox)).map((e) => e.payload.type)).toEqual(['booking.created', 'booking.rescheduled']);
    // The old slot is free, the new one taken.
    const slots = await v3(app, `/spas/${w.spa.id}/availability?date=2026-03-10&service_ids=${w.spa.massage}`, { key: w.reseller.key });
    expect(slots.body.slots.find((s: { time: string }) => s.time === '10:00').available).toBe(true);
    // A replay with the same key answers the same; the status history shows the move.
    const replay = await reschedule(booked.body.booking_id, { date: '2026-03-11', time: '14:00' }, 'move-1');
    expect(replay.body).toEqual(res.body);
    const status = await v3(app, `/bookings/${booked.body.booking_id}/status`, { key: w.reseller.key });
    expect(status.body).toMatchObject({
      object: 'booking_status',
      status: 'RESCHEDULED',
      history: [{ status: 'PENDING' }, { status: 'RESCHEDULED' }],
    });
    // Cancelling the new one refunds what the old one paid.
    const cancelled = await v3(app, `/bookings/${res.body.id}/cancel`, { key: w.reseller.key, method: 'POST' });
    expect(cancelled.body.refund).toMatchObject({ policy: 'FULL', credits_refunded: 30 });
  });

  it('within its own time (15 minutes later, overlapping) › allowed with one room', async () => {
    const booked = await book.spa(app, w, {
      date: '2026-03-12',
      time: '10:00',
      spa_id: w.spa.id,
      service_ids: [w.spa.massage],
      client_id: w.client.id,
    });
    const res = await reschedule(booked.body.booking_id, { date: '2026-03-12', time: '10:15' });
    expect(res.status, res.text).toBe(201);
  });

  it('a class booking › to another instance at the same provider; the visit and spots move', async () => {
    const from = await instanceIn(app, w.gym.classId, 30);
    const to = await instanceIn(app, w.gym.classId, 54);
    const booked = await book.cls(app, w, { class_instance_id: from.id, client_id: w.client.id });
    const [before] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [
      w.client.issuedPassId,
    ]);
    const res = await reschedule(booked.body.booking_id, { class_instance_id: to.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ class_instance_id: to.id, visits_deducted: 1, rescheduled_from: booked.body.booking_id });
    const spots = await app.sql<{ id: string; spots_taken: number }>(
      'select id, spots_taken from class_instance where id in (?, ?) order by id',
      [from.id, to.id],
    );
    expect(spots.map((s) => s.spots_taken)).toEqual([0, 1]);
    const [after] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [
      w.client.issuedPassId,
    ]);
    expect(after).toEqual(before);
  });

  it('refusals › 400 for the wrong fields or another provider, 409 for a cancelled booking or a full instance', async () => {
    const from = await instanceIn(app, w.gym.classId, 30);
    const booked = await book.cls(app, w, { class_instance_id: from.id, client_id: w.client.id });
    const elsewhere = await instanceIn(app, w.copayGym.classId, 40);
    const full = await instanceIn(app, (await createClass(app, w.gym.id, w.categoryId)).id, 40, { capacity: 1, spotsTaken: 1 });
    const before = await dbState(app);
    expectValidationError(await reschedule(booked.body.booking_id, { date: '2026-03-12', time: '10:00' }), 'date');
    expectValidationError(await reschedule(booked.body.booking_id, {}), 'class_instance_id');
    expectValidationError(await reschedule(booked.body.booking_id, { class_instance_id: elsewhere.id }), 'class_instance_id');
    expectValidationError(await reschedule(booked.body.booking_id, { class_instance_id: from.id }), 'class_instance_id');
    expectError(await reschedule(booked.body.booking_id, { class_instance_id: full.id }), 409, 'class_full');
    await expectUnchanged(app, before);
    await v3(app, `/bookings/${booked.body.booking_id}/cancel`, { key: w.reseller.key, method: 'POST' });
    expectError(await reschedule(booked.body.booking_id, { class_instance_id: full.id }), 409, 'not_reschedulable');
  });

  it('a co-pay spa booking › the co-pay moves with it, no second debit', async () => {
    const session = await book.spa(app, w, {
      date: '2026-03-10',
      time: '11:00',
      spa_id: w.copaySpa.id,
      service_ids: [w.copaySpa.sauna],
      client_id: w.client.id,
    });
    const confirmed = await v3(app, `/bookings/spa/${session.body.session_id}/confirm`, { key: w.reseller.key, method: 'POST' });
    const ledger = await businessLedger(app, w.reseller.id);
    const res = await reschedule(confirmed.body.id, { date: '2026-03-10', time: '13:00' });
    expect(res.body).toMatchObject({ copay_amount: 1500, status: 'PENDING' });
    expect(await businessLedger(app, w.reseller.id)).toEqual(ledger);
  });
});
