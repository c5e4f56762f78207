import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { preparedWrite } from '../../platform/prepared-read.ts';
import { assertInTransaction, type TxEm } from '../../platform/transaction.ts';
import type { BusinessTransaction } from './ledger.entity.ts';

export interface BalanceChange {
  resellerId: string;
  /** Minor units, > 0. */
  amount: number;
  description: string;
  referenceId?: string;
  at: Date;
}

/**
 * Moves the business-account balance and appends its ledger row in the caller's transaction, in one
 * statement: the UPDATE takes the business_account row's lock (so concurrent debits serialise and
 * cannot both spend the same balance), refuses an overdraft in its WHERE, and feeds the ledger
 * INSERT. The lock is held until the caller's transaction ends, so a use case moves the balance as
 * late as it can; no foreign key references that row, so nothing else waits on it.
 */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: BalanceChange): Promise<BusinessTransaction> {
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`ledger amount must be a positive integer, got ${c.amount}`);
  const entry = {
    id: newId('businessTransaction', c.at.getTime()), resellerId: c.resellerId, type, amount: c.amount,
    description: c.description, referenceId: c.referenceId ?? null, createdAt: c.at,
  };
  const [row] = await preparedWrite<{ balance_after: string }>(em,
    `with moved as (
       update business_account set balance = balance + ? where reseller_id = ? and balance + ? >= 0 returning balance
     )
     insert into business_transaction (id, reseller_id, type, amount, balance_after, description, reference_id, created_at)
     select ?, ?, ?, ?, moved.balance, ?, ?, ? from moved
     returning balance_after`,
    [signed(type, c.amount), c.resellerId, signed(type, c.amount),
      entry.id, entry.resellerId, type, c.amount, entry.description, entry.referenceId, c.at],
  );
  if (!row) {
    const balance = await businessAccountBalance(em, c.resellerId, true);
    if (balance === undefined) throw new Error(`no reseller ${c.resellerId}`);
    throw new DomainError('insufficient_balance', `The business account balance (${balance}) cannot pay ${c.amount}`);
  }
  return { ...entry, balanceAfter: Number(row.balance_after) };
}

const signed = (type: 'CREDIT' | 'DEBIT', amount: number) => (type === 'DEBIT' ? -amount : amount);

export const debitBusinessAccount = (em: TxEm, c: BalanceChange) => change(em, 'DEBIT', c);
export const creditBusinessAccount = (em: TxEm, c: BalanceChange) => change(em, 'CREDIT', c);

export async function businessAccountBalance(em: EntityManager, resellerId: string): Promise<number>;
export async function businessAccountBalance(em: EntityManager, resellerId: string, orUndefined: true): Promise<number | undefined>;
export async function businessAccountBalance(em: EntityManager, resellerId: string, orUndefined = false): Promise<number | undefined> {
  const [row] = await em.execute<{ balance: string }[]>('select balance from business_account where reseller_id = ?', [resellerId]);
  return row ? Number(row.balance) : orUndefined ? undefined : 0;
}

/** Every reseller's business-account balance (the operator's `resellers list`). */
export async function businessAccountBalances(em: EntityManager): Promise<Map<string, number>> {
  const rows = await em.execute<{ reseller_id: string; balance: string }[]>('select reseller_id, balance from business_account');
  return new Map(rows.map((r) => [r.reseller_id, Number(r.balance)]));
}

/** A new reseller's business account, at 0, in the transaction that creates the reseller. */
export async function openBusinessAccount(em: TxEm, resellerId: string): Promise<void> {
  assertInTransaction(em);
  await em.execute('insert into business_account (reseller_id, balance) values (?, 0)', [resellerId]);
}
