import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { createPassPackage, issuePass } from './factories.ts';
import type { BookingWorld } from './bookings.ts';
import type { Reply } from './http.ts';

// The guarantees bookings keep whatever happened (docs/domain-rules.md "Money": Concurrency and Ledgers),
// read back from the database for one reseller and the providers its bookings went to. Each check
// returns what it found wrong, so a property test can print every broken rule at once.

export interface InvariantScope {
  resellerId: string;
  /** The providers whose class instances and spa rooms are checked (catalogue rows are not per reseller). */
  providerIds: string[];
}

export const worldScope = (w: BookingWorld): InvariantScope => ({
  resellerId: w.reseller.id,
  providerIds: [w.spa.id, w.copaySpa.id, w.closedSpa.id, w.gym.id, w.copayGym.id],
});

const signed = (alias: string) => `case when ${alias}.type = 'CREDIT' then ${alias}.amount else -${alias}.amount end`;

/** Every broken booking invariant of the scope, as readable lines; [] when all hold. */
export async function bookingInvariantViolations(app: TestApp, scope: InvariantScope): Promise<string[]> {
  const problems: string[] = [];
  const { resellerId, providerIds } = scope;
  const found = (rows: Record<string, unknown>[], what: string) => {
    for (const row of rows) problems.push(`${what}: ${JSON.stringify(row)}`);
  };

  // The business account: its balance is its ledger's sum, and never below zero.
  found(
    await app.sql(
      `select r.reseller_id as id, r.balance::text as balance, coalesce((select sum(${signed('t')}) from business_transaction t where t.reseller_id = r.reseller_id), 0)::text as ledger
       from business_account r where r.reseller_id = ?
        and (r.balance < 0 or r.balance <> coalesce((select sum(${signed('t')}) from business_transaction t where t.reseller_id = r.reseller_id), 0))`,
      [resellerId],
    ),
    'business balance is not its ledger sum',
  );

  // Each wallet: credit_balance is its ledger's sum, and never below zero.
  found(
    await app.sql(
      `select c.id, c.credit_balance::text as balance, coalesce(l.sum, 0)::text as ledger
       from client c left join (select client_id, sum(${signed('t')}) as sum from credit_transaction t group by client_id) l on l.client_id = c.id
      where c.reseller_id = ? and (c.credit_balance < 0 or c.credit_balance <> coalesce(l.sum, 0))`,
      [resellerId],
    ),
    'wallet balance is not its ledger sum',
  );

  // Each pass counter of the counter's month equals that month's ledger rows (entitlement null),
  // per category, is not negative and stays within the category's visits_allowed.
  found(
    await app.sql(
      `with counters as (
       select ip.id, ip.visits_period, cat.key as category, (cat.value)::int as used
         from issued_pass ip, jsonb_each_text(ip.visits_used) cat where ip.reseller_id = ?
     ), ledger as (
       select ip.id, t.category, sum(t.delta)::int as used
         from issued_pass ip join visit_transaction t
           on t.issued_pass_id = ip.id and t.visit_entitlement_id is null and t.period = ip.visits_period
        where ip.reseller_id = ? group by ip.id, t.category
     )
     select coalesce(c.id, l.id) as issued_pass_id, coalesce(c.category, l.category) as category,
            coalesce(c.used, 0) as counter, coalesce(l.used, 0) as ledger
       from counters c full join ledger l on l.id = c.id and l.category = c.category
      where coalesce(c.used, 0) <> coalesce(l.used, 0) or coalesce(c.used, 0) < 0`,
      [resellerId, resellerId],
    ),
    'pass visit counter is not its ledger sum',
  );
  found(
    await app.sql(
      `select ip.id, cat.key as category, (cat.value)::int as used, (pc->>'visits_allowed')::int as allowed
       from issued_pass ip
       join pass_package p on p.id = ip.pass_id
       cross join jsonb_each_text(ip.visits_used) cat
       cross join lateral (select x as pc from jsonb_array_elements(p.categories) x where x->>'type' = cat.key) pc
      where ip.reseller_id = ? and pc->>'visits_allowed' is not null and (cat.value)::int > (pc->>'visits_allowed')::int`,
      [resellerId],
    ),
    'pass visit counter above visits_allowed',
  );

  // Each entitlement's visits_used equals its ledger rows, within 0..visits_total.
  found(
    await app.sql(
      `select e.id, e.visits_used, e.visits_total, coalesce((select sum(t.delta) from visit_transaction t where t.visit_entitlement_id = e.id), 0)::int as ledger
       from visit_entitlement e where e.reseller_id = ?
        and (e.visits_used <> coalesce((select sum(t.delta) from visit_transaction t where t.visit_entitlement_id = e.id), 0)
             or e.visits_used < 0 or e.visits_used > e.visits_total)`,
      [resellerId],
    ),
    'entitlement visits_used is not its ledger sum',
  );

  // Class spots: never above capacity, and exactly the live bookings holding one.
  found(
    await app.sql(
      `select ci.id, ci.capacity, ci.spots_taken,
            (select count(*) from booking b where b.class_instance_id = ci.id and b.status in ('PENDING', 'CONFIRMED'))::int as live
       from class_instance ci join class c on c.id = ci.class_id
      where c.provider_id in (?)
        and (ci.spots_taken > ci.capacity or ci.spots_taken < 0
             or ci.spots_taken <> (select count(*) from booking b where b.class_instance_id = ci.id and b.status in ('PENDING', 'CONFIRMED')))`,
      [providerIds],
    ),
    'class instance spots_taken is not its live bookings (or above capacity)',
  );

  // Spa rooms: at the start of every live appointment (where the most appointments can run at
  // once), no more live appointments run than the spa has rooms.
  found(
    await app.sql(
      `select b.id, b.provider_id, b.starts_at, p.room_capacity,
            (select count(*) from booking o where o.provider_id = b.provider_id and o.type = 'spa' and o.status in ('PENDING', 'CONFIRMED')
               and o.starts_at <= b.starts_at and o.ends_at > b.starts_at)::int as running
       from booking b join provider p on p.id = b.provider_id
      where b.provider_id in (?) and b.type = 'spa' and b.status in ('PENDING', 'CONFIRMED')
        and (select count(*) from booking o where o.provider_id = b.provider_id and o.type = 'spa' and o.status in ('PENDING', 'CONFIRMED')
               and o.starts_at <= b.starts_at and o.ends_at > b.starts_at) > p.room_capacity`,
      [providerIds],
    ),
    'spa room capacity exceeded',
  );

  // A session books once, and a CONFIRMED session names the one booking it made.
  found(
    await app.sql(
      `select s.id, s.status, s.booking_id, (select count(*) from booking b where b.session_id = s.id)::int as bookings
       from booking_session s where s.reseller_id = ?
        and ((s.status = 'CONFIRMED') <> ((select count(*) from booking b where b.session_id = s.id) = 1)
             or (s.status = 'CONFIRMED' and not exists (select 1 from booking b where b.id = s.booking_id and b.session_id = s.id)))`,
      [resellerId],
    ),
    'session and its booking disagree',
  );

  // Money reconciles with what bookings say they paid and got back: every booking debit is a
  // spa co-pay or a purchase (entitlement), every refund is on a cancelled booking's `refund`.
  const [money] = await app.sql<Record<string, string>>(
    `select
       (select coalesce(sum(t.amount), 0) from business_transaction t join booking b on b.id = t.reference_id
         where t.reseller_id = ? and t.type = 'DEBIT')::text as business_debits,
       ((select coalesce(sum(b.copay_amount), 0) from booking b where b.reseller_id = ? and b.type = 'spa' and b.session_id is not null)
        + (select coalesce(sum(e.amount_paid), 0) from visit_entitlement e where e.reseller_id = ?))::text as paid_for,
       (select coalesce(sum(t.amount), 0) from business_transaction t join booking b on b.id = t.reference_id
         where t.reseller_id = ? and t.type = 'CREDIT')::text as business_refunds,
       (select coalesce(sum((b.refund->>'copay_refunded')::bigint), 0) from booking b where b.reseller_id = ?)::text as copay_refunded,
       (select coalesce(sum(t.amount), 0) from credit_transaction t where t.reseller_id = ? and t.type = 'DEBIT' and t.booking_id is not null)::text as wallet_debits,
       (select coalesce(sum(b.credits_charged), 0) from booking b where b.reseller_id = ? and b.rescheduled_from is null)::text as credits_charged,
       (select coalesce(sum(t.amount), 0) from credit_transaction t where t.reseller_id = ? and t.type = 'CREDIT' and t.booking_id is not null)::text as wallet_refunds,
       (select coalesce(sum((b.refund->>'credits_refunded')::bigint), 0) from booking b where b.reseller_id = ?)::text as credits_refunded,
       (select coalesce(sum(-t.delta), 0) from visit_transaction t where t.reseller_id = ? and t.reason = 'CANCELLATION')::text as visits_given_back,
       (select coalesce(sum((b.refund->>'visits_restored')::int), 0) from booking b where b.reseller_id = ?)::text as visits_restored`,
    Array(11).fill(resellerId),
  );
  for (const [ledger, bookings] of [
    ['business_debits', 'paid_for'],
    ['business_refunds', 'copay_refunded'],
    ['wallet_debits', 'credits_charged'],
    ['wallet_refunds', 'credits_refunded'],
    ['visits_given_back', 'visits_restored'],
  ] as const) {
    if (money[ledger] !== money[bookings]) problems.push(`${ledger} (${money[ledger]}) is not ${bookings} (${money[bookings]})`);
  }
  return problems;
}

/** Fails, listing every broken invariant, unless all hold. */
export async function expectBookingInvariants(app: TestApp, scope: InvariantScope): Promise<void> {
  expect(await bookingInvariantViolations(app, scope)).toEqual([]);
}

/** How many replies had each status (and error code): `{ '201': 10, '409 class_full': 40 }`. */
export function tally(replies: Reply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of replies) {
    const label = r.status >= 400 ? `${r.status} ${r.body?.error?.code}` : String(r.status);
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/** `n` more clients of the world's reseller, each holding the world's pass (issued over REST, a few at a time). */
export async function manyClients(app: TestApp, w: BookingWorld, n: number, tag: string): Promise<{ id: string; issuedPassId: string }[]> {
  const clients: { id: string; issuedPassId: string }[] = [];
  for (let i = 0; i < n; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, (_, j) =>
        issuePass(app, w.reseller, w.passId, { first_name: 'Client', last_name: `No${i + j}`, email: `${tag}.${i + j}@example.com` }),
      ),
    );
    clients.push(...batch.map((p) => ({ id: p.client_id, issuedPassId: p.id })));
  }
  return clients;
}

/**
 * Another client of the world's reseller on a pass of its own: `gymVisits` gym visits a month
 * (SILVER and BRONZE gyms), `credits` (50 unless told) for SILVER spas, `price` a month (so one extra
 * visit costs price / gymVisits, rounded up).
 */
export async function clientOnPass(
  app: TestApp,
  w: BookingWorld,
  opts: { gymVisits: number; price: number; email: string; credits?: number },
) {
  const pass = await createPassPackage(app, w.reseller, {
    price: opts.price,
    categories: [
      { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visits_allowed: opts.gymVisits, credit_allocated: 0 },
      { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: opts.credits ?? 50 },
    ],
  });
  const issued = await issuePass(app, w.reseller, pass.id, { email: opts.email });
  return { id: issued.client_id, issuedPassId: issued.id };
}
