import { newId } from '../../platform/ids.ts';
import { preparedRead, preparedWrite, queueWrite, sqlText } from '../../db/engine/index.ts';
import type { TxEm } from '../../db/engine/index.ts';
import { CreditPackageSchema, type CreditPackage, type CreditTransaction } from './credits.entity.ts';

// Other modules reach credits only through this file (docs/architecture.md "Module boundaries").
export type { CreditPackage, CreditPurchase, CreditTransaction } from './credits.entity.ts';

export interface WalletChange {
  resellerId: string;
  clientId: string;
  /** Credits, > 0. */
  amount: number;
  description: string;
  bookingId?: string;
  /** The credit purchase this change belongs to (docs/partner-guide.md "Credits"). */
  creditPurchaseId?: string;
  at: Date;
}

const INSERT_ROW = `insert into credit_transaction (id, reseller_id, client_id, type, amount, description, booking_id, credit_purchase_id, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** A wallet ledger row as written; its balance_after and seq are filled in by the row's trigger. */
export type WalletEntry = Omit<CreditTransaction, 'balanceAfter'>;

function entryOf(type: 'CREDIT' | 'DEBIT', c: WalletChange): { entry: WalletEntry; params: unknown[] } {
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`credit amount must be a positive integer, got ${c.amount}`);
  const entry = {
    id: newId('creditTransaction', c.at.getTime()),
    resellerId: c.resellerId,
    clientId: c.clientId,
    type,
    amount: c.amount,
    description: c.description,
    bookingId: c.bookingId ?? null,
    creditPurchaseId: c.creditPurchaseId ?? null,
    createdAt: c.at,
  };
  return {
    entry,
    params: [entry.id, entry.resellerId, entry.clientId, type, c.amount, entry.description, entry.bookingId, entry.creditPurchaseId, c.at],
  };
}

/**
 * Appends a row to the client's wallet ledger, which moves the balance (the row trigger of
 * src/db/migrations/Migration20261127020000_wallet_by_ledger.ts: it locks the client row, refuses
 * an overdraft as 400 insufficient_credits through src/platform/errors.ts `refusalOf`, and fills in
 * balance_after and seq, drawn after the lock so one client's rows in seq order are the order its
 * balance moved, docs/domain-rules.md "Money"). The INSERT is queued: it rides in the transaction's next
 * statement, where a refusal fails that statement and the use case with it.
 */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: WalletChange): Promise<WalletEntry> {
  const { entry, params } = entryOf(type, c);
  await queueWrite(em, INSERT_ROW, params);
  return entry;
}

/** The same for a credit whose answer shows the new balance (a credit purchase), sent now. */
export async function creditWalletShowingBalance(em: TxEm, c: WalletChange): Promise<WalletEntry & { balanceAfter: number }> {
  const { entry, params } = entryOf('CREDIT', c);
  // The writes the transaction queued ride along: this statement reads nothing they write.
  const [row] = await preparedWrite<{ balance_after: string }>(em, sqlText`${INSERT_ROW} returning balance_after`, params, {
    carriesQueued: true,
  });
  return { ...entry, balanceAfter: Number(row!.balance_after) };
}

export const creditWallet = (em: TxEm, c: WalletChange) => change(em, 'CREDIT', c);

/** The client's wallet balance, its row locked to the end of the transaction (nothing else moves it meanwhile). */
export async function lockedWalletBalance(em: TxEm, resellerId: string, clientId: string): Promise<number> {
  const [row] = await preparedRead<{ credit_balance: string }>(
    em,
    'select credit_balance from client where id = ? and reseller_id = ? for update',
    [clientId, resellerId],
  );
  return Number(row!.credit_balance);
}
export const debitWallet = (em: TxEm, c: WalletChange) => change(em, 'DEBIT', c);

export interface NewCreditPackage {
  resellerId: string;
  name: string;
  credits: number;
  price: number;
  currency: string;
  createdAt: Date;
}

/**
 * A credit package of a reseller (the operator's and seed --demo's, docs/partner-guide.md "Credits"), in the
 * reseller's currency; persisted at the next flush. Credits and price are positive integers.
 */
export function createCreditPackage(em: TxEm, p: NewCreditPackage): CreditPackage {
  for (const [what, n] of [
    ['credits', p.credits],
    ['price', p.price],
  ] as const) {
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`credit package ${what} must be a positive integer, got ${n}`);
  }
  return em.create(CreditPackageSchema, { ...p, id: newId('creditPackage', p.createdAt.getTime()) });
}
