import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { expectBookingInvariants, worldScope } from '../support/bookings-invariants.ts';
import { businessLedger, issuePass } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// Every co-pay confirm of a reseller debits its one business-account row, and the debit's lock is
// held until COMMIT, so confirms queue for it. A confirm therefore debits after everything else,
// its idempotency record included (`tx.last`, README "Bookings"): the lock is held over the debit
// and COMMIT only. The record's statement bounds its own wait with lock_timeout
// (IDEMPOTENCY_WAIT_MS, short here) and puts the setting back, so the debit after it waits for the
// account as long as any statement would.

const app = useApp({ IDEMPOTENCY_WAIT_MS: '300' }, { now: new Date('2026-03-02T08:00:00Z') });
const T = 60_000;
let w: BookingWorld;
beforeAll(async () => { w = await createBookingWorld(app); });

let blocker: pg.Client | undefined;
afterEach(async () => { await blocker?.end().catch(() => undefined); blocker = undefined; });

let emails = 0;
const newClientId = async () => (await issuePass(app, w.reseller, w.passId, { email: `lock.${++emails}@example.com` })).client_id;

interface Confirm { path: string; body?: Record<string, unknown>; amount: number }

let spaSlot = 0;
/** A spa co-pay session (Gold Spa, massage: 4500), each at an hour of its own. */
async function spaConfirm(): Promise<Confirm> {
  const time = `${String(9 + spaSlot++).padStart(2, '0')}:00`;
  const res = await book.spa(app, w, { date: '2026-03-12', time, spa_id: w.copaySpa.id, service_ids: [w.copaySpa.massage], client_id: await newClientId() });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY', copay_amount: 4500 });
  return { path: `/bookings/spa/${res.body.session_id}/confirm`, amount: 4500 };
}

/** A class co-pay session (Gold Gym, its option: 2500 for 3 visits). */
async function classConfirm(): Promise<Confirm> {
  const res = await book.cls(app, w, { class_instance_id: (await instanceIn(app, w.copayGym.classId, 30)).id, client_id: await newClientId() });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY' });
  return { path: `/bookings/class/${res.body.session_id}/confirm`, body: { copay_package_id: w.copayGym.optionId }, amount: 2500 };
}

const send = (c: Confirm, key: string) => v3(app, c.path, { key: w.reseller.key, ...(c.body ? { body: c.body } : { method: 'POST' }), idempotencyKey: key });

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each([['spa', spaConfirm], ['class', classConfirm]] as const)('a %s co-pay confirm with an Idempotency-Key', (_, open) => {
  it('debits the business account last: after the idempotency record, just before COMMIT', async () => {
    const c = await open();
    app.queries!.reset();
    const res = await send(c, `order-${c.path}`);
    expect(res.status, res.text).toBe(201);
    const sql = app.queries!.ownStatements.map((q) => q.trim().toLowerCase());
    const record = sql.findIndex((q) => q.includes('insert into idempotency_record'));
    const debit = sql.findIndex((q) => q.includes('update business_account'));
    expect(record, sql.join('\n')).toBeGreaterThan(0);
    expect(debit, sql.join('\n')).toBe(record + 1);
    expect(sql[debit + 1]).toBe('commit');
  }, T);

  it('waits for a business account locked longer than IDEMPOTENCY_WAIT_MS, then books and debits once', async () => {
    const c = await open();
    const before = await businessLedger(app, w.reseller.id);
    blocker = new pg.Client({ connectionString: app.databaseUrl });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('select balance from business_account where reseller_id = $1 for update', [w.reseller.id]);

    const answer = send(c, `wait-${c.path}`);
    // The confirm has stored its record and waits in the debit, on the account's row.
    await waitUntil(async () => (await app.sql<{ n: string }>(
      `select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%update business_account%'`))[0].n === '1',
    'the confirm waits in its debit');
    // Three times IDEMPOTENCY_WAIT_MS: a debit still under the record's lock_timeout would have given up.
    await new Promise((r) => setTimeout(r, 900));
    await blocker.query('commit');

    const res = await answer;
    expect(res.status, res.text).toBe(201);
    expect(await businessLedger(app, w.reseller.id)).toEqual({
      balance: before.balance - c.amount, ledgerSum: before.balance - c.amount, rows: before.rows + 1,
    });
    await expectBookingInvariants(app, worldScope(w));
  }, T);
});
