import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { preparedWrite } from '../../platform/prepared-read.ts';
import type { TxEm } from '../../platform/transaction.ts';
import { CreditPackageSchema, type CreditPackage, type CreditTransaction } from './credits.entity.ts';
import type { presentCreditPurchase } from './credits.presenter.ts';

// Other modules reach credits only through this file (README "Module boundaries").
export type { CreditPackage, CreditPurchase, CreditTransaction } from './credits.entity.ts';
/** The payload (`data.object`) of the credits.purchased event: the V3 `credit_purchase`. */
export type CreditPurchaseObject = ReturnType<typeof presentCreditPurchase>;

export interface WalletChange {
  resellerId: string;
  clientId: string;
  /** Credits, > 0. */
  amount: number;
  description: string;
  bookingId?: string;
  /** The credit purchase this change belongs to (README "Credits"). */
  creditPurchaseId?: string;
  at: Date;
}

/**
 * Moves a client's credit balance and appends its wallet row in one statement: the UPDATE locks the
 * client row (FOR NO KEY UPDATE, compatible with the key-share locks of rows referencing the client),
 * refuses an overdraft in its WHERE, and feeds the wallet INSERT. The row's `seq` (its column
 * default) is drawn as the row is inserted, after the UPDATE got the lock, so one client's rows in
 * `seq` order are the order its balance moved; the id was made before the lock wait, so under
 * concurrency id order may differ (README "Credits").
 */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: WalletChange): Promise<CreditTransaction> {
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`credit amount must be a positive integer, got ${c.amount}`);
  const delta = type === 'DEBIT' ? -c.amount : c.amount;
  const entry = {
    id: newId('creditTransaction', c.at.getTime()), resellerId: c.resellerId, clientId: c.clientId, type, amount: c.amount,
    description: c.description, bookingId: c.bookingId ?? null, creditPurchaseId: c.creditPurchaseId ?? null, createdAt: c.at,
  };
  const [row] = await preparedWrite<{ balance_after: string }>(em,
    `with moved as (
       update client set credit_balance = credit_balance + ? where id = ? and reseller_id = ? and credit_balance + ? >= 0
       returning credit_balance
     )
     insert into credit_transaction (id, reseller_id, client_id, type, amount, balance_after, description, booking_id, credit_purchase_id, created_at)
     select ?, ?, ?, ?, ?, moved.credit_balance, ?, ?, ?, ? from moved
     returning balance_after`,
    [delta, c.clientId, c.resellerId, delta,
      entry.id, entry.resellerId, entry.clientId, type, c.amount, entry.description, entry.bookingId, entry.creditPurchaseId, c.at],
    // The writes the transaction queued ride along (a business-account ledger row, say): this
    // statement reads only the client and its wallet, and a queued write to either is sent first.
    { carriesQueued: true },
  );
  if (!row) {
    const [client] = await em.execute<{ credit_balance: string }[]>(
      'select credit_balance from client where id = ? and reseller_id = ?', [c.clientId, c.resellerId]);
    if (!client) throw new Error(`no client ${c.clientId}`);
    throw new DomainError('insufficient_credits', `The client has ${client.credit_balance} credits; ${c.amount} are needed`);
  }
  return { ...entry, balanceAfter: Number(row.balance_after) };
}

export const creditWallet = (em: TxEm, c: WalletChange) => change(em, 'CREDIT', c);
export const debitWallet = (em: TxEm, c: WalletChange) => change(em, 'DEBIT', c);

export interface NewCreditPackage { resellerId: string; name: string; credits: number; price: number; currency: string; createdAt: Date }

/**
 * A credit package of a reseller (the operator's and seed --demo's, README "Credits"), in the
 * reseller's currency; persisted at the next flush. Credits and price are positive integers.
 */
export function createCreditPackage(em: TxEm, p: NewCreditPackage): CreditPackage {
  for (const [what, n] of [['credits', p.credits], ['price', p.price]] as const) {
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`credit package ${what} must be a positive integer, got ${n}`);
  }
  return em.create(CreditPackageSchema, { ...p, id: newId('creditPackage', p.createdAt.getTime()) });
}
