import { newId } from '../../platform/ids.ts';
import { preparedWrite, queueWrite } from '../../db/engine/index.ts';
import { assertInTransaction, type TxEm } from '../../db/engine/index.ts';
import { VisitEntitlementSchema, type CategoryType, type VisitEntitlement } from './passes.entity.ts';

// Visits: a pass's monthly counters (issued_pass.visits_used for visits_period) and the visit
// entitlements bought on top of it (extra visits, co-pay packages). Every change moves the counter
// and appends its visit_transaction row in one statement (a visit of an unlimited pass: in two
// writes queued together), so the counters always equal the ledger's sums (docs/domain-rules.md "Money").

export const visitsPeriodOf = (at: Date): string => at.toISOString().slice(0, 7);

/** ACCESS_CODE: taken for an access code; ACCESS_CODE_EXPIRED: given back by a code that expired unredeemed (docs/partner-guide.md "Access codes"). */
export type VisitReason = 'BOOKING' | 'CANCELLATION' | 'RENEWAL' | 'ACCESS_CODE' | 'ACCESS_CODE_EXPIRED';

interface PassVisit {
  issuedPassId: string;
  category: CategoryType;
  /** The category's monthly cap; null = unlimited. */
  allowed: number | null;
  at: Date;
  bookingId?: string;
  /** The access code the visit is taken for (visit_transaction.access_code_id). */
  accessCodeId?: string;
  reason: VisitReason;
}

/**
 * Takes one visit from the pass's counter of the current month, under the row lock the UPDATE
 * takes. Returns the month it was counted in, or undefined when the cap is used up.
 */
export async function takePassVisit(em: TxEm, v: PassVisit): Promise<string | undefined> {
  const period = visitsPeriodOf(v.at);
  if (v.allowed === null) {
    // Unlimited: nothing can refuse the visit, so nothing is read back: the counter's UPDATE and
    // the ledger row are queued, and ride in the use case's next statement. The row's reseller and
    // client are the pass's, which never change, so reading them from that statement's snapshot is
    // exact; the UPDATE counts on the row as it is when it gets the lock, as below.
    await queueWrite(
      em,
      `update issued_pass set visits_used = (case when visits_period = ? then visits_used else '{}'::jsonb end)
              || jsonb_build_object(?::text, (case when visits_period = ? then coalesce((visits_used->>?)::int, 0) else 0 end) + 1),
              visits_period = ?, updated_at = ?
        where id = ?`,
      [period, v.category, period, v.category, period, v.at, v.issuedPassId],
    );
    await queueWrite(
      em,
      `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, booking_id, access_code_id, created_at)
       select ?, ip.reseller_id, ip.client_id, ip.id, ?, ?, 1, ?, ?, ?, ? from issued_pass ip where ip.id = ?`,
      [
        newId('visitTransaction', v.at.getTime()),
        v.category,
        period,
        v.reason,
        v.bookingId ?? null,
        v.accessCodeId ?? null,
        v.at,
        v.issuedPassId,
      ],
    );
    return period;
  }
  // The month's count is read from the row the UPDATE locks, not from an earlier snapshot: a
  // concurrent booking of the same pass makes PostgreSQL re-check the WHERE and recompute the SET
  // on the row as that booking left it, so the cap holds and the counter matches the ledger.
  const used = `(case when ip.visits_period = ? then coalesce((ip.visits_used->>?)::int, 0) else 0 end)`;
  const [row] = await preparedWrite<{ period: string }>(
    em,
    `with moved as (
       update issued_pass ip
          set visits_used = (case when ip.visits_period = ? then ip.visits_used else '{}'::jsonb end)
                            || jsonb_build_object(?::text, ${used} + 1),
              visits_period = ?, updated_at = ?
        where ip.id = ? and (?::int is null or ${used} < ?::int)
       returning ip.id, ip.reseller_id, ip.client_id
     )
     insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, booking_id, access_code_id, created_at)
     select ?, moved.reseller_id, moved.client_id, moved.id, ?, ?, 1, ?, ?, ?, ? from moved
     returning period`,
    [
      period,
      v.category,
      period,
      v.category,
      period,
      v.at,
      v.issuedPassId,
      v.allowed,
      period,
      v.category,
      v.allowed,
      newId('visitTransaction', v.at.getTime()),
      v.category,
      period,
      v.reason,
      v.bookingId ?? null,
      v.accessCodeId ?? null,
      v.at,
    ],
  );
  return row ? period : undefined;
}

interface EntitlementPick {
  clientId: string;
  kind: VisitEntitlement['kind'];
  category: CategoryType;
  /** COPAY entitlements hold at one provider. */
  providerId?: string;
  at: Date;
  bookingId?: string;
  /** The access code the visit is taken for (visit_transaction.access_code_id). */
  accessCodeId?: string;
  reason: VisitReason;
}

/**
 * Takes one visit from the client's usable entitlement of that kind (valid now, visits left; the
 * one ending first), locking it. Returns its id, or undefined when there is none.
 */
export async function takeEntitlementVisit(em: TxEm, e: EntitlementPick): Promise<string | undefined> {
  const [row] = await preparedWrite<{ visit_entitlement_id: string }>(
    em,
    `with pick as (
       select id from visit_entitlement
        where client_id = ? and kind = ? and category = ? and (?::text is null or provider_id = ?)
          and valid_from <= ? and valid_until > ? and visits_used < visits_total
        order by valid_until, id limit 1
        for update
     ), moved as (
       update visit_entitlement e set visits_used = e.visits_used + 1
         from pick where e.id = pick.id and e.visits_used < e.visits_total
       returning e.id, e.reseller_id, e.client_id, e.issued_pass_id, e.category
     )
     insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, visit_entitlement_id, category, delta, reason, booking_id, access_code_id, created_at)
     select ?, moved.reseller_id, moved.client_id, moved.issued_pass_id, moved.id, moved.category, 1, ?, ?, ?, ? from moved
     returning visit_entitlement_id`,
    [
      e.clientId,
      e.kind,
      e.category,
      e.providerId ?? null,
      e.providerId ?? null,
      e.at,
      e.at,
      newId('visitTransaction', e.at.getTime()),
      e.reason,
      e.bookingId ?? null,
      e.accessCodeId ?? null,
      e.at,
    ],
  );
  return row?.visit_entitlement_id;
}

export type NewEntitlement = Omit<VisitEntitlement, 'id' | 'visitsUsed' | 'createdAt'>;

/** Grants visits bought on top of the pass (persisted at the caller's next flush). */
export function grantEntitlement(em: TxEm, e: NewEntitlement): VisitEntitlement {
  return em.create(VisitEntitlementSchema, {
    ...e,
    id: newId('visitEntitlement', e.validFrom.getTime()),
    visitsUsed: 0,
    createdAt: e.validFrom,
  });
}

interface TakenVisit {
  issuedPassId: string;
  category: CategoryType;
  /** The entitlement it came from, or null for the pass counter. */
  entitlementId: string | null;
  /** The counter's month it was taken in (pass counter only). */
  period: string | null;
  at: Date;
  bookingId?: string;
  /** The access code that gives it back (visit_transaction.access_code_id). */
  accessCodeId?: string;
  /** Why it goes back; a cancelled booking's unless told otherwise. */
  reason?: VisitReason;
}

/**
 * Gives a taken visit back: to its entitlement, or to the pass counter when the visit was taken
 * this month and the counter still holds it (a visit of a month gone by, or one a renewal reset,
 * has nothing to go back to). Returns how many visits were restored (0 or 1).
 */
export async function restoreVisit(em: TxEm, v: TakenVisit): Promise<number> {
  assertInTransaction(em);
  // A month gone by has nothing to give back to, whether or not this month's counter has started.
  if (v.entitlementId === null && v.period !== visitsPeriodOf(v.at)) return 0;
  const txnId = newId('visitTransaction', v.at.getTime());
  const reason = v.reason ?? 'CANCELLATION';
  const rows =
    v.entitlementId !== null
      ? await preparedWrite(
          em,
          `with moved as (
         update visit_entitlement set visits_used = visits_used - 1 where id = ? and visits_used > 0
         returning id, reseller_id, client_id, issued_pass_id, category
       )
       insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, visit_entitlement_id, category, delta, reason, booking_id, access_code_id, created_at)
       select ?, reseller_id, client_id, issued_pass_id, id, category, -1, ?, ?, ?, ? from moved returning id`,
          [v.entitlementId, txnId, reason, v.bookingId ?? null, v.accessCodeId ?? null, v.at],
        )
      : await preparedWrite(
          em,
          `with moved as (
         update issued_pass set visits_used = visits_used || jsonb_build_object(?::text, (visits_used->>?)::int - 1), updated_at = ?
          where id = ? and visits_period = ? and coalesce((visits_used->>?)::int, 0) > 0
         returning id, reseller_id, client_id
       )
       insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, booking_id, access_code_id, created_at)
       select ?, reseller_id, client_id, id, ?, ?, -1, ?, ?, ?, ? from moved returning id`,
          [
            v.category,
            v.category,
            v.at,
            v.issuedPassId,
            v.period,
            v.category,
            txnId,
            v.category,
            v.period,
            reason,
            v.bookingId ?? null,
            v.accessCodeId ?? null,
            v.at,
          ],
        );
  return rows.length;
}

/**
 * A renewal starts the counters again: each non-zero counter of the pass's current month gets a
 * ledger row taking it back to zero. The caller then clears the counters in its own update.
 */
export async function resetPassVisits(
  em: TxEm,
  issuedPass: { id: string; resellerId: string; clientId: string; visitsPeriod: string; visitsUsed: Partial<Record<CategoryType, number>> },
  at: Date,
): Promise<void> {
  assertInTransaction(em);
  for (const [category, used] of Object.entries(issuedPass.visitsUsed)) {
    if (!used) continue;
    await preparedWrite(
      em,
      `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
       values (?, ?, ?, ?, ?, ?, ?, 'RENEWAL', ?)`,
      [
        newId('visitTransaction', at.getTime()),
        issuedPass.resellerId,
        issuedPass.clientId,
        issuedPass.id,
        category,
        issuedPass.visitsPeriod,
        -used,
        at,
      ],
    );
  }
}
