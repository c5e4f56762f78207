import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import type { CreditPackage, CreditPurchase, CreditTransaction } from './credits.entity.ts';

// V3 presenters of credits (docs/partner-guide.md "Credits"); each returns z.infer of the schema the OpenAPI
// document publishes. Credits and money are integers; money is minor units of `currency`.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

export const creditPackageSchema = z
  .object({
    object: z.literal('credit_package').describe('Always `credit_package`'),
    id: z.string().describe('Credit package id'),
    name: z.string().describe('Name of the package'),
    credits: z.int().min(1).describe("Credits a purchase puts in the client's wallet"),
    price: z.int().min(1).describe('What a purchase debits from the business account, minor units of `currency`'),
    currency: z.string().describe("ISO-4217 currency code of `price` (the reseller's currency)"),
    created: unixTime('Creation time'),
  })
  .meta({ id: 'CreditPackage', description: 'A package of credits the reseller sells to its clients' });
export type CreditPackageObject = z.infer<typeof creditPackageSchema>;

export function presentCreditPackage(p: CreditPackage): CreditPackageObject {
  return {
    object: 'credit_package',
    id: p.id,
    name: p.name,
    credits: p.credits,
    price: p.price,
    currency: p.currency,
    created: unixSeconds(p.createdAt),
  };
}

export const creditPurchaseSchema = z
  .object({
    object: z.literal('credit_purchase').describe('Always `credit_purchase`'),
    id: z.string().describe('Credit purchase id; both ledger rows of the purchase reference it'),
    client_id: z.string().describe('The client whose wallet was credited'),
    credit_package_id: z.string().describe('The credit package bought'),
    credits: z.int().min(1).describe("Credits put in the client's wallet"),
    amount: z.int().min(1).describe('The price paid: debited from the business account, minor units of `currency`'),
    currency: z.string().describe('ISO-4217 currency code of `amount`'),
    balance: z.int().min(0).describe("The client's wallet balance right after the purchase, in credits"),
    created: unixTime('Purchase time'),
  })
  .meta({ id: 'CreditPurchase', description: "A credit package bought into a client's wallet, paid from the business account" });
export type CreditPurchaseObject = z.infer<typeof creditPurchaseSchema>;

export function presentCreditPurchase(p: CreditPurchase): CreditPurchaseObject {
  return {
    object: 'credit_purchase',
    id: p.id,
    client_id: p.clientId,
    credit_package_id: p.creditPackageId,
    credits: p.credits,
    amount: p.amount,
    currency: p.currency,
    balance: p.balanceAfter,
    created: unixSeconds(p.createdAt),
  };
}

export const creditTransactionSchema = z
  .object({
    id: z.string().describe('Wallet transaction id (a cursor of this wallet: `starting_after`, `ending_before`)'),
    type: z.enum(['CREDIT', 'DEBIT']).describe('CREDIT: credits came in; DEBIT: credits were spent'),
    amount: z.int().min(1).describe('Credits moved'),
    balance_after: z.int().min(0).describe('The wallet balance right after this change'),
    description: z.string().describe('Human-readable reason'),
    booking_id: z.string().nullable().describe('The booking that spent or refunded the credits; null otherwise'),
    credit_purchase_id: z.string().nullable().describe('The credit purchase that brought the credits; null otherwise'),
    created: unixTime('When the wallet changed'),
  })
  .meta({ id: 'CreditTransaction', description: "One change of a client's credit wallet" });
export type CreditTransactionObject = z.infer<typeof creditTransactionSchema>;

export function presentCreditTransaction(t: CreditTransaction): CreditTransactionObject {
  return {
    id: t.id,
    type: t.type,
    amount: t.amount,
    balance_after: t.balanceAfter,
    description: t.description,
    booking_id: t.bookingId ?? null,
    credit_purchase_id: t.creditPurchaseId ?? null,
    created: unixSeconds(t.createdAt),
  };
}

export const creditBalanceSchema = z
  .object({
    object: z.literal('credit_balance').describe('Always `credit_balance`'),
    client_id: z.string().describe('The client'),
    balance: z.int().min(0).describe("Credits in the client's wallet"),
    currency: z.string().describe('ISO-4217 currency code of the reseller, in which credit packages are priced'),
    transactions: z
      .array(creditTransactionSchema)
      .describe(
        'Wallet changes, newest first (the order the balance moved in): the 20 most recent, or the page `limit`, ' +
          '`starting_after` and `ending_before` ask for',
      ),
    has_more: z
      .boolean()
      .describe(
        'true when more transactions exist beyond this page in the direction of paging (older ones, unless `ending_before` was sent)',
      ),
  })
  .meta({ id: 'CreditBalance', description: "A client's credit wallet: its balance and its most recent changes" });
export type CreditBalanceObject = z.infer<typeof creditBalanceSchema>;

export interface CreditBalanceView {
  clientId: string;
  balance: number;
  currency: string;
  transactions: CreditTransaction[];
  hasMore: boolean;
}

export function presentCreditBalance(b: CreditBalanceView): CreditBalanceObject {
  return {
    object: 'credit_balance',
    client_id: b.clientId,
    balance: b.balance,
    currency: b.currency,
    transactions: b.transactions.map(presentCreditTransaction),
    has_more: b.hasMore,
  };
}
