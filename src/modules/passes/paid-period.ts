import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import type { Client } from '../clients/index.ts';
import { debitWallet, lockedWalletBalance } from '../credits/index.ts';
import { creditBusinessAccount, debitBusinessAccount } from '../ledger/index.ts';
import type { IssuedPass, PassPackage } from './passes.entity.ts';
import { daysInPeriodEnding } from './passes.service.ts';
import { grantPeriodCredits } from './issue-pass.ts';

// The money of a PREPAID period when a pass changes package (docs/domain-rules.md "Decisions recorded here"): the coverage
// and the credits of a period are paid together, so they come back together.

interface Held {
  issuedPass: IssuedPass;
  pass: PassPackage;
  client: Client;
}

const DAY_MS = 86_400_000;

/** When the pass's coverage begins: its start date, midnight UTC. */
export const coverageStart = (issuedPass: IssuedPass): Date => new Date(`${issuedPass.startDate}T00:00:00Z`);

/** A new PREPAID period from now: its price from the business account, its credits into the wallet. */
export async function startPaidPeriod(ctx: TxCtx, { issuedPass, pass, client }: Held, now: Date): Promise<void> {
  const { resellerId } = resellerOf(ctx);
  if (pass.price > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId,
      amount: pass.price,
      at: now,
      referenceId: issuedPass.id,
      description: `Prepaid pass '${pass.name}' for ${client.id} (changed package)`,
    });
  }
  await grantPeriodCredits(ctx, pass, client, now, `Credits of pass '${pass.name}' (changed package)`);
}

/**
 * Leaving a PREPAID package: its unused whole days up to paid_through come back, price × days left
 * ÷ days in the period, rounded down, with the same share of the period's SPA credits taken back
 * from the wallet. Credits already spent cannot come back, so the refund shrinks in proportion:
 * otherwise entering and leaving a package on one day would hand out its credits for nothing.
 */
export async function refundUnusedPeriod(ctx: TxCtx, { issuedPass, pass, client }: Held, now: Date): Promise<void> {
  const paidThrough = issuedPass.paidThrough;
  // Days before a future start date are not used either, but they were never more than paid for.
  const from = Math.max(now.getTime(), coverageStart(issuedPass).getTime());
  if (!paidThrough || paidThrough.getTime() <= from) return;
  const daysLeft = BigInt(Math.floor((paidThrough.getTime() - from) / DAY_MS));
  const daysInPeriod = BigInt(Math.max(1, daysInPeriodEnding(paidThrough, pass.duration)));
  if (daysLeft === 0n) return;
  const { resellerId } = resellerOf(ctx);
  const periodCredits = BigInt(pass.categories.find((c) => c.type === 'SPA')?.credit_allocated ?? 0);
  const creditsDue = (periodCredits * daysLeft) / daysInPeriod;
  let refund = (BigInt(pass.price) * daysLeft) / daysInPeriod;
  if (creditsDue > 0n) {
    const balance = BigInt(await lockedWalletBalance(ctx.em, resellerId, client.id));
    const taken = balance < creditsDue ? balance : creditsDue;
    refund = (BigInt(pass.price) * daysLeft * taken) / (daysInPeriod * creditsDue);
    if (taken > 0n) {
      await debitWallet(ctx.em, {
        resellerId,
        clientId: client.id,
        amount: Number(taken),
        at: now,
        description: `Unused credits of pass '${pass.name}' (${daysLeft} of ${daysInPeriod} days left)`,
      });
    }
  }
  if (refund > 0n) {
    await creditBusinessAccount(ctx.em, {
      resellerId,
      amount: Number(refund),
      at: now,
      referenceId: issuedPass.id,
      description: `Unused ${daysLeft} of ${daysInPeriod} days of prepaid pass '${pass.name}' for ${client.id}`,
    });
  }
}
