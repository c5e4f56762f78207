import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertInTransaction, type TxEm } from '../../platform/transaction.ts';
import type { CreditTransaction } from './credits.entity.ts';

export interface WalletChange {
  resellerId: string;
  clientId: string;
  /** Credits, > 0. */
  amount: number;
  description: string;
  bookingId?: string;
  at: Date;
}

/**
 * Moves a client's credit balance and appends its wallet row in one statement: the UPDATE locks the
 * client row (FOR NO KEY UPDATE, compatible with the key-share locks of rows referencing the client),
 * refuses an overdraft in its WHERE, and feeds the wallet INSERT.
 */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: WalletChange): Promise<CreditTransaction> {
  assertInTransaction(em);
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`credit amount must be a positive integer, got ${c.amount}`);
  const delta = type === 'DEBIT' ? -c.amount : c.amount;
  const entry = {
    id: newId('creditTransaction', c.at.getTime()), resellerId: c.resellerId, clientId: c.clientId, type, amount: c.amount,
    description: c.description, bookingId: c.bookingId ?? null, createdAt: c.at,
  };
  const [row] = await em.execute<{ balance_after: string }[]>(
    `with moved as (
       update client set credit_balance = credit_balance + ? where id = ? and reseller_id = ? and credit_balance + ? >= 0
       returning credit_balance
     )
     insert into credit_transaction (id, reseller_id, client_id, type, amount, balance_after, description, booking_id, created_at)
     select ?, ?, ?, ?, ?, moved.credit_balance, ?, ?, ? from moved
     returning balance_after`,
    [delta, c.clientId, c.resellerId, delta,
      entry.id, entry.resellerId, entry.clientId, type, c.amount, entry.description, entry.bookingId, c.at],
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
