import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { createPassPackage, issuePass } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// The pass's visit counters equal the visit ledger's sums for the counter's month, through
// bookings, cancellations and a renewal that starts the counters again (docs/domain-rules.md "Money").

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

async function counterAndLedger(issuedPassId: string) {
  const [row] = await app.sql<{ used: number | null; ledger: string | null }>(
    `select (ip.visits_used->>'GYM')::int as used,
            (select sum(delta) from visit_transaction t
              where t.issued_pass_id = ip.id and t.visit_entitlement_id is null and t.period = ip.visits_period and t.category = 'GYM') as ledger
       from issued_pass ip where ip.id = ?`,
    [issuedPassId],
  );
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

describe('visit ledger of a pass with unlimited visits', () => {
  // Nothing can refuse such a visit, so its counter UPDATE and ledger row are queued with the
  // booking's other writes (src/modules/passes/visits.ts): concurrent bookings of one pass still
  // each count on the row as the one before left it.
  it('12 concurrent bookings of one client at 12 instances › 12 × 201, the counter and the ledger both 12; a cancel gives one back', async () => {
    const unlimited = await createPassPackage(app, w.reseller, {
      categories: [{ type: 'GYM', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 0 }],
    });
    const issued = await issuePass(app, w.reseller, unlimited.id, { email: 'unlimited@example.com' });
    const instances = await Promise.all(Array.from({ length: 12 }, (_, i) => instanceIn(app, w.gym.classId, 60 + i)));
    const answers = await Promise.all(
      instances.map((instance, i) =>
        book.cls(app, w, { class_instance_id: instance.id, client_id: issued.client_id }, i % 2 === 0 ? `unlimited-${i}` : undefined),
      ),
    );
    expect(
      answers.map((a) => a.status),
      answers.map((a) => a.text).join('\n'),
    ).toEqual(Array(12).fill(201));
    expect(await counterAndLedger(issued.id)).toEqual({ counter: 12, ledger: 12 });
    const [row] = await app.sql<{ reseller_id: string; client_id: string; n: string }>(
      'select reseller_id, client_id, count(*) as n from visit_transaction where issued_pass_id = ? group by 1, 2',
      [issued.id],
    );
    expect(row).toEqual({ reseller_id: w.reseller.id, client_id: issued.client_id, n: '12' });

    const cancelled = await v3(app, `/bookings/${answers[0].body.booking_id}/cancel`, { key: w.reseller.key, method: 'POST' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await counterAndLedger(issued.id)).toEqual({ counter: 11, ledger: 11 });
  });
});
