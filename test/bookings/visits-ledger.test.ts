import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { createPassPackage, issuePass } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// The pass's visit counters equal the visit ledger's sums for the counter's month, through
// bookings, cancellations and a renewal that starts the counters again (README "Bookings").

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => { w = await createBookingWorld(app); });

async function counterAndLedger(issuedPassId: string) {
  const [row] = await app.sql<{ used: number | null; ledger: string | null }>(
    `select (ip.visits_used->>'GYM')::int as used,
            (select sum(delta) from visit_transaction t
              where t.issued_pass_id = ip.id and t.visit_entitlement_id is null and t.period = ip.visits_period and t.category = 'GYM') as ledger
       from issued_pass ip where ip.id = ?`, [issuedPassId]);
  return { counter: row.used ?? 0, ledger: Number(row.ledger ?? 0) };
}

describe('visit ledger', () => {
  it('bookings, a full cancel and a renewal keep the counter equal to the ledger', async () => {
    const prepaid = await createPassPackage(app, w.reseller, { paymentModel: 'PREPAID', price: 1000 });
    const issued = await issuePass(app, w.reseller, prepaid.id, { email: 'renew@example.com' });
    const booked = [];
    for (const hours of [30, 40, 50]) {
      const instance = await instanceIn(app, w.gym.classId, hours);
      booked.push((await book.cls(app, w, { class_instance_id: instance.id, client_id: issued.client_id })).body.booking_id);
    }
    expect(await counterAndLedger(issued.id)).toEqual({ counter: 3, ledger: 3 });
    await v3(app, `/bookings/${booked[2]}/cancel`, { key: w.reseller.key, method: 'POST' });
    expect(await counterAndLedger(issued.id)).toEqual({ counter: 2, ledger: 2 });

    const renewed = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: w.reseller.key, body: {} });
    expect(renewed.status, renewed.text).toBe(201);
    expect(await counterAndLedger(issued.id)).toEqual({ counter: 0, ledger: 0 });
    // A booking from before the renewal gives nothing back to the new counters.
    const cancelled = await v3(app, `/bookings/${booked[0]}/cancel`, { key: w.reseller.key, method: 'POST' });
    expect(cancelled.body.refund).toMatchObject({ policy: 'FULL', visits_restored: 0 });
    expect(await counterAndLedger(issued.id)).toEqual({ counter: 0, ledger: 0 });
  });
});
