import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertInTransaction, type TxEm } from '../../platform/transaction.ts';
import { BusinessTransactionSchema, type BusinessTransaction } from './ledger.entity.ts';

export interface BalanceChange {
  resellerId: string;
  /** Minor units, > 0. */
  amount: number;
  description: string;
  referenceId?: string;
  at: Date;
}

/**
 * Moves the business-account balance and appends its ledger row in the caller's transaction.
 * The reseller row is locked first so concurrent debits cannot both spend the same balance.
 */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: BalanceChange): Promise<BusinessTransaction> {
  assertInTransaction(em);
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`ledger amount must be a positive integer, got ${c.amount}`);
  // NO KEY UPDATE, not UPDATE: inserts referencing the reseller (client, idempotency_record) hold FOR KEY SHARE on
  // its row, which FOR UPDATE conflicts with, so two such transactions deadlocked; this still serialises debits.
  const [row] = await em.execute<{ balance: string }[]>('select balance from reseller where id = ? for no key update', [c.resellerId]);
  if (!row) throw new Error(`no reseller ${c.resellerId}`);
  const balance = Number(row.balance);
  if (type === 'DEBIT' && balance < c.amount) {
    throw new DomainError('insufficient_balance',
      `The business account balance (${balance}) cannot pay ${c.amount}`);
  }
  const balanceAfter = type === 'DEBIT' ? balance - c.amount : balance + c.amount;
  await em.execute('update reseller set balance = ? where id = ?', [balanceAfter, c.resellerId]);
  const entry = em.create(BusinessTransactionSchema, {
    id: newId('businessTransaction', c.at.getTime()),
    resellerId: c.resellerId,
    type,
    amount: c.amount,
    balanceAfter,
    description: c.description,
    referenceId: c.referenceId ?? null,
    createdAt: c.at,
  });
  await em.flush();
  return entry;
}

export const debitBusinessAccount = (em: TxEm, c: BalanceChange) => change(em, 'DEBIT', c);
export const creditBusinessAccount = (em: TxEm, c: BalanceChange) => change(em, 'CREDIT', c);

export async function businessAccountBalance(em: EntityManager, resellerId: string): Promise<number> {
  const [row] = await em.execute<{ balance: string }[]>('select balance from reseller where id = ?', [resellerId]);
  return Number(row?.balance ?? 0);
}
