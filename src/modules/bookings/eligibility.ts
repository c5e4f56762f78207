import { DomainError, validationError } from '../../platform/errors.ts';
import type { Ctx } from '../../platform/request-context.ts';
import { shortText } from '../../platform/validation.ts';
import { getOwnClient, type Client } from '../clients/clients.service.ts';
import {
  currentPassOf, effectiveStatus, getOwnIssuedPass, idParam,
  type Duration, type IssuedPass, type PassCategory, type PassPackage,
} from '../passes/passes.service.ts';
import { coveredTiers, type Provider } from '../providers/providers.service.ts';

// Who a booking is for and what their pass covers: shared by spa and class bookings (and, later,
// access codes). README "Bookings" states the rules.

/** The client fields of an initiation: `client_id` or `user_pass_id` (or both, agreeing), names optional. */
export const holderFields = {
  client_id: idParam.optional(),
  user_pass_id: idParam.optional(),
  first_name: shortText(100).optional(),
  last_name: shortText(100).optional(),
};
export interface HolderInput { client_id?: string; user_pass_id?: string; first_name?: string; last_name?: string }

export interface Holder { client: Client; issuedPass: IssuedPass; pass: PassPackage }

/**
 * The client and its issued pass, which must be ACTIVE now and still valid when the appointment
 * starts. Names, when sent, must be the client's (a guard against booking for the wrong client).
 */
export async function holderOf(ctx: Ctx, input: HolderInput, startsAt: Date): Promise<Holder> {
  if (input.client_id === undefined && input.user_pass_id === undefined) {
    throw validationError('client_id', 'Send client_id or user_pass_id');
  }
  let held: { issuedPass: IssuedPass; pass: PassPackage } | undefined;
  let client: Client;
  if (input.user_pass_id !== undefined) {
    held = await getOwnIssuedPass(ctx, input.user_pass_id, 'user_pass_id');
    client = await getOwnClient(ctx, held.issuedPass.clientId);
    if (input.client_id !== undefined && input.client_id !== client.id) {
      throw validationError('user_pass_id', `Issued pass '${input.user_pass_id}' is not the pass of client '${input.client_id}'`);
    }
  } else {
    client = await getOwnClient(ctx, input.client_id!, 'client_id');
    held = await currentPassOf(ctx.em, client);
    if (!held) throw new DomainError('pass_not_active', `Client '${client.id}' holds no pass`);
  }
  for (const [field, value, actual] of [['first_name', input.first_name, client.firstName], ['last_name', input.last_name, client.lastName]] as const) {
    if (value !== undefined && value.toLowerCase() !== actual.toLowerCase()) {
      throw validationError(field, `${field} does not match client '${client.id}'`);
    }
  }
  const now = ctx.clock.now();
  const status = effectiveStatus(held.issuedPass, now);
  if (status !== 'ACTIVE') throw new DomainError('pass_not_active', `The client's pass is ${status}`);
  if (held.issuedPass.expiresAt.getTime() <= startsAt.getTime()) {
    throw new DomainError('pass_not_active', "The client's pass expires before the appointment starts");
  }
  return { client, ...held };
}

/** How a pass meets a provider: `covered` when one of its categories has the provider's category and tier. */
export interface Coverage { covered: boolean; category: PassCategory | undefined }

export function coverageOf(pass: PassPackage, provider: Provider): Coverage {
  const covered = coveredTiers(pass).some((c) => c.category === provider.category && c.tiers.includes(provider.tier));
  return { covered, category: pass.categories.find((c) => c.type === provider.category) };
}

const MONTHS: Record<Duration, number> = { MONTHLY: 1, QUARTERLY: 3, ANNUALLY: 12 };

/**
 * The price of one visit bought on top of the pass: the pass's price spread over the visits it
 * allows in a period, rounded up (README "Bookings"). A pass without a cap never needs one.
 */
export function costPerVisit(pass: PassPackage, category: PassCategory): number {
  const visits = (category.visits_allowed ?? 0) * MONTHS[pass.duration];
  return visits > 0 ? Math.ceil(pass.price / visits) : pass.price;
}
