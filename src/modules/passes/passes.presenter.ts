import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import type { Client } from '../clients/index.ts';
import { durations, issuedPassStatuses, paymentModels, type IssuedPass, type PassPackage } from './passes.entity.ts';
import { effectiveStatus, visitsUsed } from './passes.service.ts';

// V3 presenters: allow-lists from rows to the wire; a row is never serialised as it is.
// Each returns z.infer of its schema, which the OpenAPI document publishes (docs/openapi.json).

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

const passCategorySchema = z
  .object({
    type: z.enum(['GYM', 'SPA']).describe('The provider category this part of the pass covers'),
    tiers: z.array(z.string()).describe('Provider tier labels covered in this category'),
    visits_allowed: z.int().min(0).nullable().describe('Visits a calendar month; null = unlimited'),
    credit_allocated: z.int().min(0).describe("Credits granted to the client's wallet each period"),
  })
  .meta({ id: 'PassCategory', description: 'What a pass covers in one category' });

export const passSchema = z
  .object({
    object: z.literal('pass').describe('Always `pass`'),
    id: z.string().describe('Pass package id'),
    name: z.string().describe('Name of the pass package'),
    description: z.string().describe('Description of the pass package'),
    price: z.int().min(0).describe('Price a period, in minor units of `currency`'),
    currency: z.string().describe('ISO-4217 currency code'),
    duration: z.enum(durations).describe('Length of one period'),
    payment_model: z.enum(paymentModels).describe('PAYG or PREPAID, set by the operator for each reseller and package'),
    categories: z.array(passCategorySchema).describe('What the pass covers, one entry a provider category'),
    provider_count: z.int().min(0).describe('Providers the pass covers'),
    created: unixTime('Creation time'),
  })
  .meta({ id: 'Pass', description: 'A pass package the reseller can issue' });
export type PassResource = z.infer<typeof passSchema>;

const issuedPassCategorySchema = z
  .object({
    ...passCategorySchema.shape,
    visits_used: z.int().min(0).describe('Visits used this calendar month (UTC)'),
  })
  .meta({ id: 'IssuedPassCategory', description: 'What an issued pass covers in one category, with the visits used' });

export const issuedPassSchema = z
  .object({
    object: z.literal('issued_pass').describe('Always `issued_pass`'),
    id: z.string().describe('Issued pass id'),
    client_id: z.string().describe('Id of the client holding the pass'),
    pass_id: z.string().describe('Id of the pass package issued'),
    pass_name: z.string().describe('Name of the pass package issued'),
    passcode: z.string().describe('The pass code the client shows; unique'),
    status: z.enum(issuedPassStatuses).describe('ACTIVE, EXPIRED (past `expires_at`) or CANCELLED'),
    payment_model: z.enum(paymentModels).describe('PAYG or PREPAID, taken from the pass package when issued'),
    categories: z.array(issuedPassCategorySchema).describe('What the pass covers, one entry a provider category'),
    start_date: z.string().describe('First day of the pass, YYYY-MM-DD'),
    expires_at: unixTime('Expiry time'),
    paid_through: unixTime('PREPAID: end of the last paid period; `expires_at` may not pass it without a renewal')
      .nullable()
      .describe('PREPAID: end of the last paid period, Unix seconds; `expires_at` may not pass it without a renewal. PAYG: null'),
    created: unixTime('Issue time'),
  })
  .meta({ id: 'IssuedPass', description: 'A pass issued to a client' });
export type IssuedPassResource = z.infer<typeof issuedPassSchema>;

export const passRenewalSchema = z
  .object({
    object: z.literal('pass_renewal').describe('Always `pass_renewal`'),
    issued_pass: issuedPassSchema.describe('The issued pass after the renewal'),
    amount: z.int().min(0).describe('Debited from the business account, minor units of `currency`'),
    currency: z.string().describe('ISO-4217 currency code'),
    previous_expires_at: unixTime('Expiry before the renewal'),
    new_expires_at: unixTime('Expiry after the renewal'),
  })
  .meta({ id: 'PassRenewal', description: 'The result of renewing a PREPAID pass for one more period' });
export type PassRenewalResource = z.infer<typeof passRenewalSchema>;

export function presentPass(pass: PassPackage, providerCount = 0): PassResource {
  return {
    object: 'pass',
    id: pass.id,
    name: pass.name,
    description: pass.description,
    price: pass.price,
    currency: pass.currency,
    duration: pass.duration,
    payment_model: pass.paymentModel,
    categories: pass.categories.map((c) => ({
      type: c.type,
      tiers: [...c.tiers],
      visits_allowed: c.visits_allowed,
      credit_allocated: c.credit_allocated,
    })),
    provider_count: providerCount,
    created: unixSeconds(pass.createdAt),
  };
}

export function presentIssuedPass(r: { issuedPass: IssuedPass; pass: PassPackage; client?: Client }, now: Date): IssuedPassResource {
  const { issuedPass: ip, pass } = r;
  return {
    object: 'issued_pass',
    id: ip.id,
    client_id: ip.clientId,
    pass_id: ip.passId,
    pass_name: pass.name,
    passcode: ip.passcode,
    status: effectiveStatus(ip, now),
    payment_model: ip.paymentModel,
    categories: pass.categories.map((c) => ({
      type: c.type,
      tiers: [...c.tiers],
      visits_allowed: c.visits_allowed,
      visits_used: visitsUsed(ip, c.type, now),
      credit_allocated: c.credit_allocated,
    })),
    start_date: ip.startDate,
    expires_at: unixSeconds(ip.expiresAt),
    paid_through: ip.paidThrough ? unixSeconds(ip.paidThrough) : null,
    created: unixSeconds(ip.createdAt),
  };
}

export function presentRenewal(
  r: { issuedPass: IssuedPass; pass: PassPackage; amount: number; previousExpiresAt: Date },
  now: Date,
): PassRenewalResource {
  return {
    object: 'pass_renewal',
    issued_pass: presentIssuedPass(r, now),
    amount: r.amount,
    currency: r.pass.currency,
    previous_expires_at: unixSeconds(r.previousExpiresAt),
    new_expires_at: unixSeconds(r.issuedPass.expiresAt),
  };
}
