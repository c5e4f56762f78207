import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { parseInput } from '../../platform/validation.ts';
import { costPerVisit, coverageOf, holderOf, type Holder } from '../bookings/index.ts';
import {
  idParam,
  takeEntitlementVisit,
  takePassVisit,
  visitsUsed,
  type CategoryType,
  type PassCategory,
  type PassPackage,
} from '../passes/index.ts';
import { copayOptionsOf, coveredTiers, getProvider, type CopayOption, type Provider } from '../providers/index.ts';
import type { AccessCodeSession } from './access-codes.entity.ts';
import { issueAccessCode, newAccessCodeId, openAccessCodeSession, type IssuedAccessCode } from './issue-access-code.ts';

export const createAccessCodeInput = z.strictObject({
  pass_code: z
    .string()
    .regex(/^[A-Za-z0-9]{8}$/, 'Expected the 8-character passcode of an issued pass')
    .optional()
    .describe("The client's issued pass's 8-character `passcode` (any case); send this or `client_id` (or both, agreeing)"),
  client_id: idParam.optional().describe('The client; send this or `pass_code`'),
  provider_id: idParam.optional().describe('The provider the code is for; without it the code is valid at any gym the pass covers'),
});
export type CreateAccessCodeInput = z.input<typeof createAccessCodeInput>;

/**
 * What POST /access-codes made, one result for every surface (access-codes.presenter.ts writes it as V3
 * JSON, access-codes.graphql.ts reads it): a code now, or a session to confirm first.
 */
export type AccessCodeCreation = { issued: IssuedAccessCode; session?: undefined } | AccessCodeSessionOpened;

/** A session to confirm once a co-pay (one of `copayOptions`) or extra visits (at the session's `costPerVisit`) are bought. */
export interface AccessCodeSessionOpened {
  issued?: undefined;
  session: AccessCodeSession;
  copayRequired: boolean;
  additionalVisitsRequired: boolean;
  message: string;
  copayOptions: CopayOption[];
}

function sessionOpened(session: AccessCodeSession, copayOptions: CopayOption[]): AccessCodeSessionOpened {
  const copay = session.kind === 'COPAY';
  return {
    session,
    copayRequired: copay,
    additionalVisitsRequired: !copay,
    message: copay
      ? 'The pass does not cover this provider: collect a co-pay option, then confirm the session with its id'
      : "This month's visits are used up: buy extra visits, then confirm the session",
    copayOptions,
  };
}

/**
 * Without a provider a code is valid at any provider the pass covers, and holds a gym visit: the
 * pass must cover some gym tier.
 */
function gymCoverage(pass: PassPackage): { covered: boolean; category: PassCategory | undefined } {
  return { covered: coveredTiers(pass).some((c) => c.category === 'GYM'), category: pass.categories.find((c) => c.type === 'GYM') };
}

/**
 * POST /access-codes (docs/partner-guide.md "Access codes"), with the eligibility of a class booking: the client
 * (`client_id` or `pass_code`) must hold an ACTIVE pass. Covered (the provider's category and tier,
 * or any gym without `provider_id`) → a code holding one visit of the month, else one of extra
 * visits bought before, else an `additional_visits_required` session. Not covered → a code holding
 * a visit of a co-pay package bought at that provider, else a `copay_required` session when it
 * offers co-pay options in the reseller's currency, else 403 provider_not_covered.
 */
export async function createAccessCode(ctx: TxCtx, raw: CreateAccessCodeInput): Promise<AccessCodeCreation> {
  const input = parseInput(createAccessCodeInput, raw);
  if (input.pass_code === undefined && input.client_id === undefined) throw validationError('client_id', 'Send client_id or pass_code');
  const provider = input.provider_id !== undefined ? await getProvider(ctx, input.provider_id, 'provider_id') : undefined;
  const now = ctx.clock.now();
  const holder = await holderOf(ctx, { client_id: input.client_id, pass_code: input.pass_code }, now);
  const category = provider?.category ?? 'GYM';
  const coverage = provider ? coverageOf(holder.pass, provider) : gymCoverage(holder.pass);
  const id = newAccessCodeId(now);
  const visit: CodeVisit = {
    issuedPassId: holder.issuedPass.id,
    clientId: holder.client.id,
    category,
    at: now,
    accessCodeId: id,
    reason: 'ACCESS_CODE',
  };

  if (coverage.covered) {
    const passCategory = coverage.category!;
    const period = await takePassVisit(ctx.em, { ...visit, allowed: passCategory.visits_allowed });
    if (period) return { issued: await issueAccessCode(ctx, holder, provider, category, { visitPeriod: period }, id) };
    const extra = await takeEntitlementVisit(ctx.em, { ...visit, kind: 'EXTRA_VISITS' });
    if (extra) return { issued: await issueAccessCode(ctx, holder, provider, category, { visitEntitlementId: extra }, id) };
    // The counter was at the cap when the UPDATE saw it, even if the pass read before showed less (a concurrent visit).
    const session = await openAccessCodeSession(ctx, holder, provider, {
      kind: 'EXTRA_VISITS',
      copayOptions: [],
      costPerVisit: costPerVisit(holder.pass, passCategory),
      visitsUsed: Math.max(visitsUsed(holder.issuedPass, category, now), passCategory.visits_allowed ?? 0),
      maxVisits: passCategory.visits_allowed,
    });
    return sessionOpened(session, []);
  }
  if (!provider)
    throw new DomainError(
      'provider_not_covered',
      "The client's pass covers no gym: send the provider_id of a provider it covers, or one with co-pay options",
    );
  return notCovered(ctx, holder, provider, visit);
}

/** The visit a code takes, recorded for the code (`accessCodeId`) in the visit ledger. */
interface CodeVisit {
  issuedPassId: string;
  clientId: string;
  category: CategoryType;
  at: Date;
  accessCodeId: string;
  reason: 'ACCESS_CODE';
}

async function notCovered(ctx: TxCtx, holder: Holder, provider: Provider, visit: CodeVisit): Promise<AccessCodeCreation> {
  const copay = await takeEntitlementVisit(ctx.em, { ...visit, kind: 'COPAY', providerId: provider.id });
  if (copay)
    return { issued: await issueAccessCode(ctx, holder, provider, provider.category, { visitEntitlementId: copay }, visit.accessCodeId) };
  const options = await copayOptionsOf(ctx.em, provider.id, resellerOf(ctx).currency);
  if (options.length === 0) {
    throw new DomainError(
      'provider_not_covered',
      `The client's pass does not cover provider '${provider.id}' (tier ${provider.tier}) and it offers no co-pay option`,
    );
  }
  const session = await openAccessCodeSession(ctx, holder, provider, {
    kind: 'COPAY',
    copayOptions: options,
    costPerVisit: null,
    visitsUsed: null,
    maxVisits: null,
  });
  return sessionOpened(session, options);
}
