import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from './request-context.ts';

// A writing use case takes a TxCtx, and only `inTransaction`/`withTransaction` make one, so a write
// cannot run outside a transaction by construction (docs: README "Request pipeline").

declare const inTransactionBrand: unique symbol;

/** An entity manager inside an open transaction (or a savepoint of one). */
export type TxEm = EntityManager & { readonly [inTransactionBrand]: true };

/** The context of a writing use case. */
export interface TxCtx extends Ctx { readonly em: TxEm }

/** Runs `run` in a transaction; inside one already, in a savepoint that a thrown error rolls back. */
export function inTransaction<T>(ctx: Ctx, run: (tx: TxCtx) => Promise<T>): Promise<T> {
  return ctx.em.transactional((em) => run({ ...ctx, em: em as TxEm }));
}

/** The same for operator and seed code, which has an entity manager but no request. */
export function withTransaction<T>(em: EntityManager, run: (tx: TxEm) => Promise<T>): Promise<T> {
  return em.transactional((inner) => run(inner as TxEm));
}

/** Balance changes check it at run time too: the type can be cast away, a missing transaction cannot. */
export function assertInTransaction(em: TxEm): void {
  if (!em.isInTransaction()) throw new Error('balances change only inside a transaction');
}

let savepointCount = 0;

/**
 * Runs `run` after a savepoint inside the caller's transaction; an error rolls back to it and is
 * rethrown. On success the savepoint is left for COMMIT to release (one statement fewer per write).
 */
export async function inSavepoint<T>(ctx: Ctx, run: (tx: TxCtx) => Promise<T>): Promise<T> {
  if (!ctx.em.isInTransaction()) throw new Error('a savepoint needs an open transaction');
  const tx = ctx as TxCtx;
  const name = `use_case_${++savepointCount}`;
  await tx.em.execute(`savepoint ${name}`);
  try {
    return await run(tx);
  } catch (err) {
    await tx.em.execute(`rollback to savepoint ${name}`);
    tx.em.clear(); // nothing of the rolled-back work may be flushed later
    throw err;
  }
}
