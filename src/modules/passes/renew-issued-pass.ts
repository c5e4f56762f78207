import { z } from 'zod';
import { DomainError } from '../../platform/errors.ts';
import { parseInput } from '../../platform/validation.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { debitBusinessAccount } from '../ledger/index.ts';
import { PassPackageSchema, type IssuedPass, type PassPackage } from './passes.entity.ts';
import { getOwnClient } from '../clients/index.ts';
import { addDuration, findCurrentIssuedPass, visitsPeriodOf } from './passes.service.ts';
import { grantPeriodCredits } from './issue-pass.ts';
import { resetPassVisits } from './visits.ts';
import { recordPassEvent } from './passes.events.ts';

export const renewInput = z.strictObject({});
export type RenewInput = z.input<typeof renewInput>;

export interface RenewalResult {
  issuedPass: IssuedPass;
  pass: PassPackage;
  amount: number;
  previousExpiresAt: Date;
}

/**
 * PREPAID only: extends by one duration from max(now, expires_at), debits the price, resets the
 * visit counters and grants the period's credits, all in one transaction.
 */
export async function renewIssuedPass(ctx: TxCtx, clientId: string, raw: RenewInput = {}): Promise<RenewalResult> {
  parseInput(renewInput, raw);
  const { resellerId } = resellerOf(ctx);
  const client = await getOwnClient(ctx, clientId);
  const issuedPass = await findCurrentIssuedPass(ctx.em, resellerId, client.id, true);
  if (!issuedPass) throw new DomainError('resource_not_found', `No issued pass for client '${clientId}'`);
  if (issuedPass.status === 'CANCELLED') throw new DomainError('pass_cancelled', 'The issued pass is cancelled and cannot be renewed');
  if (issuedPass.paymentModel !== 'PREPAID') throw new DomainError('not_prepaid', 'Only PREPAID passes can be renewed');
  const pass = await ctx.em.findOneOrFail(PassPackageSchema, { id: issuedPass.passId });

  const now = ctx.clock.now();
  const previousExpiresAt = issuedPass.expiresAt;
  const from = previousExpiresAt.getTime() > now.getTime() ? previousExpiresAt : now;
  await resetPassVisits(ctx.em, issuedPass, now);
  issuedPass.expiresAt = addDuration(from, pass.duration);
  // A renewal pays one more period; an expiry shortened below what was paid keeps what was paid.
  if (!issuedPass.paidThrough || issuedPass.paidThrough.getTime() < issuedPass.expiresAt.getTime())
    issuedPass.paidThrough = issuedPass.expiresAt;
  issuedPass.status = 'ACTIVE';
  issuedPass.visitsPeriod = visitsPeriodOf(now);
  issuedPass.visitsUsed = {};
  issuedPass.updatedAt = now;
  await ctx.em.flush();
  if (pass.price > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId,
      amount: pass.price,
      at: now,
      referenceId: issuedPass.id,
      description: `Renewal of prepaid pass '${pass.name}' for ${client.id}`,
    });
  }
  await grantPeriodCredits(ctx, pass, client, now, `Credits of renewed pass '${pass.name}'`);
  const result = { issuedPass, pass, amount: pass.price, previousExpiresAt };
  await recordPassEvent(ctx, 'issued_pass.renewed', result, { now });
  return result;
}
