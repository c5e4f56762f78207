import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertInTransaction, type TxEm } from '../../platform/transaction.ts';
import { CreditTransactionSchema, type CreditTransaction } from './credits.entity.ts';

export interface WalletChange {
  resellerId: string;
  clientId: string;
  /** Credits, > 0. */
  amount: number;
  description: string;
  bookingId?: string;
  at: Date;
}

/** Moves a client's credit balance and appends its wallet row, under a lock on the client row. */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: WalletChange): Promise<CreditTransaction> {
  assertInTransaction(em);
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`credit amount must be a positive integer, got ${c.amount}`);
  // NO KEY UPDATE: rows referencing the client (issued passes, wallet rows) take FOR KEY SHARE on it,
  // which plain FOR UPDATE would conflict with (deadlocks); this still serialises wallet changes.
  const [row] = await em.execute<{ credit_balance: string }[]>(
    'select credit_balance from client where id = ? and reseller_id = ? for no key update', [c.clientId, c.resellerId]);
  if (!row) throw new Error(`no client ${c.clientId}`);
  const balance = Number(row.credit_balance);
  if (type === 'DEBIT' && balance < c.amount) {
    throw new DomainError('insufficient_credits', `The client has ${balance} credits; ${c.amount} are needed`);
  }
  const balanceAfter = type === 'DEBIT' ? balance - c.amount : balance + c.amount;
  await em.execute('update client set credit_balance = ? where id = ?', [balanceAfter, c.clientId]);
  const entry = em.create(CreditTransactionSchema, {
    id: newId('creditTransaction', c.at.getTime()),
    resellerId: c.resellerId,
    clientId: c.clientId,
    type,
    amount: c.amount,
    balanceAfter,
    description: c.description,
    bookingId: c.bookingId ?? null,
    createdAt: c.at,
  });
  await em.flush();
  return entry;
}

export const creditWallet = (em: TxEm, c: WalletChange) => change(em, 'CREDIT', c);
export const debitWallet = (em: TxEm, c: WalletChange) => change(em, 'DEBIT', c);
