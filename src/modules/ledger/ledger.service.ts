import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../platform/ids.ts';
import { preparedRead, preparedWrite, queueWrite } from '../../db/engine/index.ts';
import { assertInTransaction, deferredToCommit, settleDeferred, type TxEm } from '../../db/engine/index.ts';

export interface BalanceChange {
  resellerId: string;
  /** Minor units, > 0. */
  amount: number;
  description: string;
  referenceId?: string;
  at: Date;
}

/** A business-account ledger row as written; the balance after it is known once its transaction commits. */
export interface BusinessEntry {
  id: string;
  resellerId: string;
  type: 'CREDIT' | 'DEBIT';
  amount: number;
  description: string;
  referenceId: string | null;
  createdAt: Date;
}

/**
 * Appends a row to the business-account ledger in the caller's transaction; the balance moves with
 * it when the transaction commits (the trigger of src/db/migrations/Migration20261127010000_settled_at_commit.ts),
 * so the ledger and the balance cannot part. An overdraft fails the COMMIT, and the whole
 * transaction with it, as 422 insufficient_balance (src/platform/errors.ts `refusalOf`). The
 * account's row lock, which every debit of a reseller queues for, is held from then to the end
 * of COMMIT only. The INSERT itself is queued (nothing reads it back): it rides in the
 * transaction's next statement.
 */
async function change(em: TxEm, type: 'CREDIT' | 'DEBIT', c: BalanceChange): Promise<BusinessEntry> {
  assertInTransaction(em);
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new Error(`ledger amount must be a positive integer, got ${c.amount}`);
  const entry = {
    id: newId('businessTransaction', c.at.getTime()),
    resellerId: c.resellerId,
    type,
    amount: c.amount,
    description: c.description,
    referenceId: c.referenceId ?? null,
    createdAt: c.at,
  };
  await queueWrite(
    em,
    'insert into business_transaction (id, reseller_id, type, amount, description, reference_id, created_at) values (?, ?, ?, ?, ?, ?, ?)',
    [entry.id, entry.resellerId, type, c.amount, entry.description, entry.referenceId, c.at],
  );
  deferredToCommit(em, 'business_transaction_settles');
  return entry;
}

export const debitBusinessAccount = (em: TxEm, c: BalanceChange) => change(em, 'DEBIT', c);
export const creditBusinessAccount = (em: TxEm, c: BalanceChange) => change(em, 'CREDIT', c);

/** The balance; inside a transaction, after applying the ledger rows it wrote (so it reads what it wrote). */
export async function businessAccountBalance(em: EntityManager, resellerId: string): Promise<number> {
  if (em.isInTransaction()) await settleDeferred(em as TxEm);
  const [row] = await preparedRead<{ balance: string }>(em, 'select balance from business_account where reseller_id = ?', [resellerId]);
  return row ? Number(row.balance) : 0;
}

/** Every reseller's business-account balance (the operator's `resellers list`). */
export async function businessAccountBalances(em: EntityManager): Promise<Map<string, number>> {
  const rows = await preparedRead<{ reseller_id: string; balance: string }>(em, 'select reseller_id, balance from business_account', []);
  return new Map(rows.map((r) => [r.reseller_id, Number(r.balance)]));
}

/** A new reseller's business account, at 0, in the transaction that creates the reseller. */
export async function openBusinessAccount(em: TxEm, resellerId: string): Promise<void> {
  assertInTransaction(em);
  await preparedWrite(em, 'insert into business_account (reseller_id, balance) values (?, 0)', [resellerId]);
}
