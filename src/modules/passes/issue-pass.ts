import { z } from 'zod';
import { validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { email, localDate, parseInput, phone, shortText } from '../../platform/validation.ts';
import { createClient, type Client } from '../clients/index.ts';
import { creditWallet } from '../credits/index.ts';
import { debitBusinessAccount } from '../ledger/index.ts';
import { IssuedPassSchema, PassPackageSchema, type IssuedPass, type PassPackage } from './passes.entity.ts';
import { addDuration, idParam, newPasscode, visitsPeriodOf } from './passes.service.ts';
import { recordPassEvent } from './passes.events.ts';

export const issuePassInput = z.strictObject({
  pass_id: idParam,
  first_name: shortText(100),
  last_name: shortText(100),
  email,
  phone: phone.optional(),
  external_id: shortText(255).optional(),
  start_date: localDate.optional(),
});
export type IssuePassInput = z.input<typeof issuePassInput>;

export interface IssuedPassResult {
  issuedPass: IssuedPass;
  pass: PassPackage;
  client: Client;
}

/**
 * Creates the client and its ACTIVE issued pass. A PREPAID package debits the business account
 * its price; the SPA category's credit allocation goes to the client's wallet. One transaction.
 */
export async function issuePass(ctx: TxCtx, raw: IssuePassInput): Promise<IssuedPassResult> {
  const input = parseInput(issuePassInput, raw);
  const { resellerId } = resellerOf(ctx);
  const now = ctx.clock.now();
  const pass = await ctx.em.findOne(PassPackageSchema, { id: input.pass_id, resellerId });
  if (!pass) throw validationError('pass_id', `No such pass: '${input.pass_id}'`);

  const today = now.toISOString().slice(0, 10);
  const startDate = input.start_date ?? today;
  if (startDate < today) throw validationError('start_date', 'start_date must be today or later');
  const start = new Date(`${startDate}T00:00:00Z`);
  if (start.getTime() - now.getTime() > 366 * 86_400_000) throw validationError('start_date', 'start_date must be within a year');

  const client = createClient(ctx.em, {
    resellerId,
    firstName: input.first_name,
    lastName: input.last_name,
    email: input.email.toLowerCase(),
    phone: input.phone ?? null,
    externalId: input.external_id ?? null,
    createdAt: now,
  });
  await ctx.em.flush(); // the client row first: the issued pass references it
  const expiresAt = addDuration(start, pass.duration);
  const issuedPass = ctx.em.create(IssuedPassSchema, {
    id: newId('issuedPass', now.getTime()),
    resellerId,
    clientId: client.id,
    passId: pass.id,
    passcode: newPasscode(),
    status: 'ACTIVE',
    paymentModel: pass.paymentModel,
    startDate,
    expiresAt,
    paidThrough: pass.paymentModel === 'PREPAID' ? expiresAt : null,
    visitsPeriod: visitsPeriodOf(now),
    visitsUsed: {},
    createdAt: now,
    updatedAt: now,
  });
  await ctx.em.flush();

  if (pass.paymentModel === 'PREPAID' && pass.price > 0) {
    await debitBusinessAccount(ctx.em, {
      resellerId,
      amount: pass.price,
      at: now,
      referenceId: issuedPass.id,
      description: `Prepaid pass '${pass.name}' for ${client.id}`,
    });
  }
  await grantPeriodCredits(ctx, pass, client, now, `Credits of pass '${pass.name}'`);
  const result = { issuedPass, pass, client };
  await recordPassEvent(ctx, 'issued_pass.created', result, { now });
  return result;
}

/** The SPA category's per-period credit allocation, into the client's wallet. */
export async function grantPeriodCredits(ctx: TxCtx, pass: PassPackage, client: Client, at: Date, description: string): Promise<void> {
  const credits = pass.categories.find((c) => c.type === 'SPA')?.credit_allocated ?? 0;
  if (credits > 0) {
    await creditWallet(ctx.em, { resellerId: client.resellerId, clientId: client.id, amount: credits, description, at });
  }
}
