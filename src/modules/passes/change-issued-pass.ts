import { z } from 'zod';
import { DomainError, validationError } from '../../platform/errors.ts';
import { recordEvent } from '../events/events.service.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../platform/transaction.ts';
import { parseInput, unixTimestamp } from '../../platform/validation.ts';
import { findOwnClient, getOwnClient } from '../clients/clients.service.ts';
import { PassPackageSchema, type IssuedPass } from './passes.entity.ts';
import { findCurrentIssuedPass, idParam } from './passes.service.ts';
import { presentIssuedPass } from './passes.presenter.ts';
import type { IssuedPassResult } from './issue-pass.ts';

export const updateIssuedPassInput = z.strictObject({ client_id: idParam, pass_id: idParam });
export type UpdateIssuedPassInput = z.input<typeof updateIssuedPassInput>;

export const setExpiryInput = z.strictObject({ expires_at: unixTimestamp });
export type SetExpiryInput = z.input<typeof setExpiryInput>;

/** Locks and returns the client's current issued pass; a cancelled one cannot change. */
async function lockChangeablePass(ctx: TxCtx, clientId: string, param?: string): Promise<IssuedPass> {
  const { resellerId } = resellerOf(ctx);
  const pass = await findCurrentIssuedPass(ctx.em, resellerId, clientId, true);
  if (!pass) throw new DomainError('resource_not_found', `No issued pass for client '${clientId}'`, { param });
  if (pass.status === 'CANCELLED') throw new DomainError('pass_cancelled', 'The issued pass is cancelled and cannot be changed');
  return pass;
}

/**
 * Moves the client's issued pass to another package, keeping its expiry. No money moves here:
 * a PREPAID pass was paid for its period; the next renewal charges the new package's price.
 */
export async function updateIssuedPass(ctx: TxCtx, raw: UpdateIssuedPassInput): Promise<IssuedPassResult> {
  const input = parseInput(updateIssuedPassInput, raw);
  const { resellerId } = resellerOf(ctx);
  const client = await findOwnClient(ctx, input.client_id);
  if (!client) throw validationError('client_id', `No such client: '${input.client_id}'`);
  const pass = await ctx.em.findOne(PassPackageSchema, { id: input.pass_id, resellerId });
  if (!pass) throw validationError('pass_id', `No such pass: '${input.pass_id}'`);
  const issuedPass = await lockChangeablePass(ctx, client.id, 'client_id');
  const now = ctx.clock.now();
  if (issuedPass.passId !== pass.id) {
    issuedPass.passId = pass.id;
    issuedPass.paymentModel = pass.paymentModel;
    issuedPass.updatedAt = now;
    await ctx.em.flush();
    await recordEvent(ctx, 'issued_pass.updated', presentIssuedPass({ issuedPass, pass }, now));
  }
  return { issuedPass, pass, client };
}

/** Sets the expiry (future, after the start date); an expired pass becomes ACTIVE again. */
export async function setIssuedPassExpiry(ctx: TxCtx, clientId: string, raw: SetExpiryInput): Promise<IssuedPassResult> {
  const input = parseInput(setExpiryInput, raw);
  const client = await getOwnClient(ctx, clientId);
  const issuedPass = await lockChangeablePass(ctx, client.id);
  const now = ctx.clock.now();
  const expiresAt = new Date(input.expires_at * 1000);
  if (expiresAt.getTime() <= now.getTime()) throw validationError('expires_at', 'expires_at must be in the future');
  if (expiresAt.getTime() <= new Date(`${issuedPass.startDate}T00:00:00Z`).getTime()) {
    throw validationError('expires_at', 'expires_at must be after the pass start date');
  }
  issuedPass.expiresAt = expiresAt;
  issuedPass.status = 'ACTIVE';
  issuedPass.updatedAt = now;
  await ctx.em.flush();
  const pass = await ctx.em.findOneOrFail(PassPackageSchema, { id: issuedPass.passId });
  await recordEvent(ctx, 'issued_pass.updated', presentIssuedPass({ issuedPass, pass }, now));
  return { issuedPass, pass, client };
}
