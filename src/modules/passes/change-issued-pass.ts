import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { parseInput, unixTimestamp } from '../../platform/validation.ts';
import { findOwnClient, getOwnClient, type Client } from '../clients/index.ts';
import { PassPackageSchema, type IssuedPass, type PassPackage } from './passes.entity.ts';
import { addDuration, findCurrentIssuedPass, idParam } from './passes.service.ts';
import type { IssuedPassResult } from './issue-pass.ts';
import { coverageStart, refundUnusedPeriod, startPaidPeriod } from './paid-period.ts';
import { recordPassEvent } from './passes.events.ts';

export const updateIssuedPassInput = z.strictObject({ client_id: idParam, pass_id: idParam });
export type UpdateIssuedPassInput = z.input<typeof updateIssuedPassInput>;

export const setExpiryInput = z.strictObject({ expires_at: unixTimestamp });
export type SetExpiryInput = z.input<typeof setExpiryInput>;

/** How far ahead a PAYG pass's expiry may be set; a PREPAID pass's is bounded by what was paid. */
const PAYG_EXPIRY_YEARS = 5;

/** Locks and returns the client's current issued pass; a cancelled one cannot change. */
async function lockChangeablePass(ctx: TxCtx, clientId: string, param?: string): Promise<IssuedPass> {
  const { resellerId } = resellerOf(ctx);
  const pass = await findCurrentIssuedPass(ctx.em, resellerId, clientId, true);
  if (!pass) throw new DomainError('resource_not_found', `No issued pass for client '${clientId}'`, { param });
  if (pass.status === 'CANCELLED') throw new DomainError('pass_cancelled', 'The issued pass is cancelled and cannot be changed');
  return pass;
}

/**
 * Moves the client's issued pass to another package; money follows the coverage
 * (docs/domain-rules.md "Decisions recorded here"). Leaving a PREPAID package refunds its unused
 * whole days; entering one starts a paid period now (its price debited, its credits granted, expiry
 * one duration on). PAYG to PAYG moves nothing and keeps the expiry. The same package again is 409 pass_unchanged.
 */
export async function updateIssuedPass(ctx: TxCtx, raw: UpdateIssuedPassInput): Promise<IssuedPassResult> {
  const input = parseInput(updateIssuedPassInput, raw);
  const { resellerId } = resellerOf(ctx);
  const client = await findOwnClient(ctx, input.client_id);
  if (!client) throw validationError('client_id', `No such client: '${input.client_id}'`);
  const pass = await ctx.em.findOne(PassPackageSchema, { id: input.pass_id, resellerId });
  if (!pass) throw validationError('pass_id', `No such pass: '${input.pass_id}'`);
  const issuedPass = await lockChangeablePass(ctx, client.id, 'client_id');
  if (issuedPass.passId === pass.id)
    throw new DomainError('pass_unchanged', `The issued pass already has pass '${pass.id}'; nothing changed`, { param: 'pass_id' });
  const now = ctx.clock.now();
  const previous = await ctx.em.findOneOrFail(PassPackageSchema, { id: issuedPass.passId });
  await changePackage(ctx, { issuedPass, previous, next: pass, client }, now);
  await recordPassEvent(ctx, 'issued_pass.updated', { issuedPass, pass }, { now });
  return { issuedPass, pass, client };
}

interface PackageChange {
  issuedPass: IssuedPass;
  previous: PassPackage;
  next: PassPackage;
  client: Client;
}

async function changePackage(ctx: TxCtx, change: PackageChange, now: Date): Promise<void> {
  const { issuedPass, previous, next, client } = change;
  if (issuedPass.paymentModel === 'PREPAID') await refundUnusedPeriod(ctx, { issuedPass, pass: previous, client }, now);
  issuedPass.passId = next.id;
  issuedPass.paymentModel = next.paymentModel;
  issuedPass.updatedAt = now;
  if (next.paymentModel === 'PREPAID') {
    const start = coverageStart(issuedPass);
    issuedPass.expiresAt = addDuration(start.getTime() > now.getTime() ? start : now, next.duration);
    issuedPass.paidThrough = issuedPass.expiresAt;
    issuedPass.status = 'ACTIVE';
  } else {
    issuedPass.paidThrough = null;
  }
  await ctx.em.flush();
  if (next.paymentModel === 'PREPAID') await startPaidPeriod(ctx, { issuedPass, pass: next, client }, now);
}

/**
 * Sets the expiry (future, after the start date); an expired pass becomes ACTIVE again. A PAYG
 * pass's at most 5 years ahead (400); a PREPAID pass's no later than its paid_through (409
 * renewal_required: only a renewal pays for more).
 */
export async function setIssuedPassExpiry(ctx: TxCtx, clientId: string, raw: SetExpiryInput): Promise<IssuedPassResult> {
  const input = parseInput(setExpiryInput, raw);
  const client = await getOwnClient(ctx, clientId);
  const issuedPass = await lockChangeablePass(ctx, client.id);
  const now = ctx.clock.now();
  const expiresAt = new Date(input.expires_at * 1000);
  if (expiresAt.getTime() <= now.getTime()) throw validationError('expires_at', 'expires_at must be in the future');
  if (expiresAt.getTime() <= coverageStart(issuedPass).getTime()) {
    throw validationError('expires_at', 'expires_at must be after the pass start date');
  }
  checkExpiryPaidFor(issuedPass, expiresAt, now);
  issuedPass.expiresAt = expiresAt;
  issuedPass.status = 'ACTIVE';
  issuedPass.updatedAt = now;
  await ctx.em.flush();
  const pass = await ctx.em.findOneOrFail(PassPackageSchema, { id: issuedPass.passId });
  await recordPassEvent(ctx, 'issued_pass.updated', { issuedPass, pass }, { now });
  return { issuedPass, pass, client };
}

function checkExpiryPaidFor(issuedPass: IssuedPass, expiresAt: Date, now: Date): void {
  if (issuedPass.paymentModel === 'PAYG') {
    const limit = new Date(now.getTime());
    limit.setUTCFullYear(limit.getUTCFullYear() + PAYG_EXPIRY_YEARS);
    if (expiresAt.getTime() > limit.getTime())
      throw validationError('expires_at', `expires_at must be at most ${PAYG_EXPIRY_YEARS} years ahead`);
    return;
  }
  const paidThrough = issuedPass.paidThrough?.getTime() ?? 0;
  if (expiresAt.getTime() > paidThrough) {
    const until = issuedPass.paidThrough ? ` (${issuedPass.paidThrough.toISOString()})` : '';
    throw new DomainError(
      'renewal_required',
      `A PREPAID pass cannot expire after its paid_through${until}; renew it to pay for another period`,
      { param: 'expires_at' },
    );
  }
}
