import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead } from './prepared-read.ts';
import { assertInTransaction, type TxEm } from './transaction.ts';
import { lagTolerant } from './replicas.ts';
import type { Ctx } from '../../platform/request-context.ts';

// Statements of one purpose each, named so the call says it (the table in README.md). Each is a
// preparedRead underneath, so it runs the same way on both engines and after the queued writes.

/**
 * A transaction-scoped advisory lock on `key` (its 64-bit text hash), held until COMMIT or
 * ROLLBACK: for a count or a claim that must not run twice at once where no row stands for it.
 */
export async function advisoryXactLock(em: TxEm, key: string): Promise<void> {
  // Outside a transaction the lock would be released as soon as it is taken.
  assertInTransaction(em);
  await preparedRead(em, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);
}

/** A planner or session setting (`enable_bitmapscan = off`) for the rest of the transaction only (`set local`). */
export async function setLocal(em: TxEm, setting: string): Promise<void> {
  assertInTransaction(em);
  // SET takes no parameters: the setting is written into the text, so only a fixed `name = value` passes.
  if (!/^[a-z_.]+ = [a-z0-9_.]+$/.test(setting)) throw new Error(`setLocal: not a 'name = value' setting: ${setting}`);
  await preparedRead(em, `set local ${setting}`, []);
}

/**
 * One statement (`?` placeholders, rows back as preparedRead gives them) that commits by itself,
 * outside any transaction: a worker's bookkeeping on a row it owns, a key made on first use. Inside
 * a transaction it is refused: a write there is preparedWrite's or queueWrite's, and goes with the
 * use case's other effects.
 */
export async function autocommitWrite<T extends object>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<T[]> {
  if (em.isInTransaction()) throw new Error('autocommitWrite commits by itself; inside a transaction use preparedWrite');
  return preparedRead<T>(em, sql, params);
}

/**
 * A read that tolerates lag (the catalogue, pass packages, availability): preparedRead on a
 * replica when DATABASE_REPLICA_URLS names any, outside a transaction, and not within
 * READ_YOUR_WRITES_MS of the caller's own write; else, or when the replica fails, on the primary
 * (src/db/engine/replicas.ts). For an entity read the same way: `lagTolerant(ctx, (connectionType)
 * => ctx.em.find(…, { connectionType }))`.
 */
export function lagTolerantRead<T extends object>(
  ctx: Pick<Ctx, 'em' | 'caller' | 'log'>,
  sql: string,
  params: readonly unknown[],
): Promise<T[]> {
  return lagTolerant(ctx, (connectionType) => preparedRead<T>(ctx.em, sql, params, { connectionType }));
}
