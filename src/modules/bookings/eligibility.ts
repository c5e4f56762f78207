import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { parseInput, shortText } from '../../platform/validation.ts';
import type { Client } from '../clients/index.ts';
import { debitBusinessAccount } from '../ledger/index.ts';
import {
  addDuration,
  effectiveStatus,
  getOwnClientWithCurrentPass,
  getOwnIssuedPass,
  getOwnIssuedPassByPasscode,
  grantEntitlement,
  idParam,
  takeEntitlementVisit,
  type CategoryType,
  type Duration,
  type HeldPassWithClient,
  type IssuedPass,
  type PassCategory,
  type PassPackage,
  type VisitReason,
} from '../passes/index.ts';
import { coveredTiers, findCopayOptions, type Provider } from '../providers/index.ts';
import type { BookingSession } from './bookings.entity.ts';

// Who a booking is for and what their pass covers: shared by spa and class bookings (and, later,
// access codes). docs/partner-guide.md "Bookings" states the rules.

/** The client fields of an initiation: `client_id` or `user_pass_id` (or both, agreeing), names optional. */
export const holderFields = {
  client_id: idParam.optional(),
  user_pass_id: idParam.optional(),
  first_name: shortText(100).optional(),
  last_name: shortText(100).optional(),
};
/** `pass_code`: the issued pass's 8-character passcode (access codes take it instead of `user_pass_id`). */
export interface HolderInput {
  client_id?: string;
  user_pass_id?: string;
  pass_code?: string;
  first_name?: string;
  last_name?: string;
}

/**
 * `resellerId` is the reseller acting (the caller's): it owns the bookings and sessions it makes and
 * pays their co-pays, also for a client of another reseller looked up with a token (docs/partner-guide.md "Lookup");
 * the wallet stays the client's own (`client.resellerId`).
 */
export interface Holder {
  client: Client;
  issuedPass: IssuedPass;
  pass: PassPackage;
  resellerId: string;
}

/**
 * The client and its issued pass, which must be ACTIVE now and still valid when the appointment
 * starts (`startsAt`; a caller that learns it later checks it with checkPassLasts). Names, when
 * sent, must be the client's (a guard against booking for the wrong client).
 */
export async function holderOf(ctx: Ctx, input: HolderInput, startsAt?: Date): Promise<Holder> {
  if (input.client_id === undefined && input.user_pass_id === undefined && input.pass_code === undefined) {
    throw validationError('client_id', 'Send client_id or user_pass_id');
  }
  let held: { issuedPass: IssuedPass; pass: PassPackage } | undefined;
  let client: Client;
  if (input.user_pass_id !== undefined) {
    const named = await getOwnIssuedPass(ctx, input.user_pass_id, 'user_pass_id');
    ({ client } = named);
    held = named;
    if (input.client_id !== undefined && input.client_id !== client.id) {
      throw validationError('user_pass_id', `Issued pass '${input.user_pass_id}' is not the pass of client '${input.client_id}'`);
    }
  } else if (input.pass_code !== undefined) {
    const named = await getOwnIssuedPassByPasscode(ctx, input.pass_code, 'pass_code');
    ({ client } = named);
    held = named;
    if (input.client_id !== undefined && input.client_id !== client.id) {
      throw validationError('pass_code', `pass_code is not the passcode of client '${input.client_id}'`);
    }
  } else {
    ({ client, held } = await getOwnClientWithCurrentPass(ctx, input.client_id!, 'client_id'));
    if (!held) throw new DomainError('pass_not_active', `Client '${client.id}' holds no pass`);
  }
  for (const [field, value, actual] of [
    ['first_name', input.first_name, client.firstName],
    ['last_name', input.last_name, client.lastName],
  ] as const) {
    if (value !== undefined && value.toLowerCase() !== actual.toLowerCase()) {
      throw validationError(field, `${field} does not match client '${client.id}'`);
    }
  }
  return holderOfPass(ctx, { ...held, client }, startsAt);
}

/** holderOf for a pass already read (a confirm's session reads its pass with it): ACTIVE now, and lasting until `startsAt`. */
export function holderOfPass(ctx: Ctx, held: HeldPassWithClient, startsAt?: Date): Holder {
  const status = effectiveStatus(held.issuedPass, ctx.clock.now());
  if (status !== 'ACTIVE') throw new DomainError('pass_not_active', `The client's pass is ${status}`);
  const holder = { client: held.client, issuedPass: held.issuedPass, pass: held.pass, resellerId: resellerOf(ctx).resellerId };
  if (startsAt) checkPassLasts(holder, startsAt);
  return holder;
}

/** 409 pass_not_active when the holder's pass expires before `startsAt`. */
export function checkPassLasts(holder: Holder, startsAt: Date): void {
  if (holder.issuedPass.expiresAt.getTime() <= startsAt.getTime()) {
    throw new DomainError('pass_not_active', "The client's pass expires before the appointment starts");
  }
}

/** How a pass meets a provider: `covered` when one of its categories has the provider's category and tier. */
export interface Coverage {
  covered: boolean;
  category: PassCategory | undefined;
}

export function coverageOf(pass: PassPackage, provider: Pick<Provider, 'category' | 'tier'>): Coverage {
  const covered = coveredTiers(pass).some((c) => c.category === provider.category && c.tiers.includes(provider.tier));
  return { covered, category: pass.categories.find((c) => c.type === provider.category) };
}

const MONTHS: Record<Duration, number> = { MONTHLY: 1, QUARTERLY: 3, ANNUALLY: 12 };

/**
 * The price of one visit bought on top of the pass: the pass's price spread over the visits it
 * allows in a period, rounded up (docs/partner-guide.md "Bookings"). A pass without a cap never needs one.
 */
export function costPerVisit(pass: PassPackage, category: PassCategory): number {
  const visits = (category.visits_allowed ?? 0) * MONTHS[pass.duration];
  return visits > 0 ? Math.ceil(pass.price / visits) : pass.price;
}

// What a session's confirm buys (docs/partner-guide.md "Bookings"): shared by class sessions and access-code
// sessions (docs/partner-guide.md "Access codes"), which buy visits the same way and differ only in what the
// bought visit then goes to (a booking, or an access code).

/** The session must still be OPEN and younger than 24 hours. */
export function checkOpen(session: Pick<BookingSession, 'id' | 'status' | 'expiresAt'> & { bookingId?: string | null }, now: Date): void {
  if (session.status === 'CONFIRMED') {
    throw new DomainError(
      'session_already_confirmed',
      `Session '${session.id}' was already confirmed${session.bookingId ? ` (booking ${session.bookingId})` : ''}`,
    );
  }
  if (session.status === 'EXPIRED' || session.expiresAt.getTime() <= now.getTime()) {
    throw new DomainError('session_expired', `Session '${session.id}' expired; start the booking again`);
  }
}

export const extraVisitsInput = z.strictObject({
  number_of_visits: z.int('Expected an integer from 1 to 50').min(1).max(50),
  duration: z.enum(['MONTHLY', 'ANNUALLY']),
});
export const copayPackageInput = z.strictObject({ copay_package_id: idParam });
/** Every field either kind of purchasing session takes (the confirm's published body); each kind parses its own. */
export const purchaseInput = z.strictObject({ ...extraVisitsInput.partial().shape, ...copayPackageInput.partial().shape });
export type PurchaseInput = z.input<typeof purchaseInput>;

/** The session fields a purchase reads and records. */
export type PurchasingSession = Pick<
  BookingSession,
  'id' | 'resellerId' | 'clientId' | 'issuedPassId' | 'currency' | 'costPerVisit' | 'copayOptionIds'
>;

/** What a confirm buys: extra visits of the pass's category, or a co-pay option at one provider. */
export interface Purchase {
  kind: 'EXTRA_VISITS' | 'COPAY';
  amount: number;
  visits: number;
  validUntil: Date;
  copayOptionId: string | null;
  description: string;
}

/**
 * The purchase a confirm's body asks for, for a session that `buys` extra visits
 * (`{number_of_visits, duration}`: cost_per_visit × number_of_visits) or a co-pay
 * (`{copay_package_id}`: one of the options it offered, at its client_copay_amount).
 */
export async function purchaseOf(
  ctx: Ctx,
  session: PurchasingSession,
  buys: Purchase['kind'],
  raw: PurchaseInput,
  now: Date,
): Promise<Purchase> {
  refuseOtherKindsFields(session, buys, raw);
  return buys === 'EXTRA_VISITS' ? extraVisits(session, raw, now) : copayPackage(ctx, session, raw, now);
}

/**
 * Buys a purchase and takes one of its visits, in the caller's transaction: grants the visits bought
 * as an entitlement (a co-pay's at `providerId`) naming `bookingSessionId` (null for an access
 * code's session, which the code names instead), and takes one of them for a booking or an access
 * code. Returns the entitlement the visit came from. The business account pays with `referenceId`,
 * its balance moving at COMMIT (src/modules/ledger/ledger.service.ts); an overdraft is 422
 * insufficient_balance and rolls back the rest.
 */
export async function buyVisits(
  ctx: TxCtx,
  session: PurchasingSession,
  purchase: Purchase,
  visit: {
    category: CategoryType;
    providerId?: string;
    at: Date;
    referenceId: string;
    bookingSessionId: string | null;
    bookingId?: string;
    accessCodeId?: string;
    reason: VisitReason;
  },
): Promise<{ entitlementId: string }> {
  const { at } = visit;
  const providerId = purchase.kind === 'COPAY' ? visit.providerId : undefined;
  grantEntitlement(ctx.em, {
    resellerId: session.resellerId,
    clientId: session.clientId,
    issuedPassId: session.issuedPassId,
    kind: purchase.kind,
    category: visit.category,
    providerId: providerId ?? null,
    copayOptionId: purchase.copayOptionId,
    visitsTotal: purchase.visits,
    amountPaid: purchase.amount,
    currency: session.currency,
    validFrom: at,
    validUntil: purchase.validUntil,
    sessionId: visit.bookingSessionId,
  });
  await ctx.em.flush();
  const entitlementId = await takeEntitlementVisit(ctx.em, {
    clientId: session.clientId,
    kind: purchase.kind,
    category: visit.category,
    ...(providerId ? { providerId } : {}),
    at,
    ...(visit.bookingId ? { bookingId: visit.bookingId } : {}),
    ...(visit.accessCodeId ? { accessCodeId: visit.accessCodeId } : {}),
    reason: visit.reason,
  });
  if (purchase.amount > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId: session.resellerId,
      amount: purchase.amount,
      at,
      referenceId: visit.referenceId,
      description: purchase.description,
    });
  }
  return { entitlementId: entitlementId! };
}

/** A field of the other session type is named first: it says the caller confirms the wrong kind of session. */
function refuseOtherKindsFields(session: PurchasingSession, buys: Purchase['kind'], raw: PurchaseInput): void {
  const [takes, needs] =
    buys === 'EXTRA_VISITS'
      ? [extraVisitsInput, 'number_of_visits and duration (an extra-visits session)']
      : [copayPackageInput, 'copay_package_id (a co-pay session)'];
  const foreign = Object.keys(raw ?? {}).find((k) => !(k in takes.shape));
  if (foreign !== undefined) throw validationError(foreign, `Session '${session.id}' does not take '${foreign}': send ${needs}`);
}

function extraVisits(session: PurchasingSession, raw: PurchaseInput, now: Date): Purchase {
  const input = parseInput(extraVisitsInput, raw);
  const amount = (session.costPerVisit ?? 0) * input.number_of_visits;
  return {
    kind: 'EXTRA_VISITS',
    amount,
    visits: input.number_of_visits,
    copayOptionId: null,
    // MONTHLY: usable until the month's counters start again; ANNUALLY: for twelve months.
    validUntil: input.duration === 'MONTHLY' ? startOfNextMonth(now) : addDuration(now, 'ANNUALLY'),
    description: `${input.number_of_visits} extra visit(s) (${input.duration}) for ${session.clientId}`,
  };
}

async function copayPackage(ctx: Ctx, session: PurchasingSession, raw: PurchaseInput, now: Date): Promise<Purchase> {
  const input = parseInput(copayPackageInput, raw);
  if (!session.copayOptionIds.includes(input.copay_package_id)) {
    throw validationError('copay_package_id', `'${input.copay_package_id}' is not one of the co-pay options of session '${session.id}'`);
  }
  const [option] = await findCopayOptions(ctx.em, [input.copay_package_id]);
  if (!option || option.currency !== resellerOf(ctx).currency) {
    throw validationError('copay_package_id', `Co-pay option '${input.copay_package_id}' is no longer offered`);
  }
  return {
    kind: 'COPAY',
    amount: option.clientCopayAmount,
    visits: option.maxVisits,
    copayOptionId: option.id,
    validUntil: new Date(now.getTime() + option.visitDurationDays * 86_400_000),
    description: `Co-pay '${option.name}' for ${session.clientId}`,
  };
}

const startOfNextMonth = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
