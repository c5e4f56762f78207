import type { EntityManager } from '@mikro-orm/postgresql';
import { dropQueuedWrites, flushQueuedWrites, logStatement, openWriteQueue, queuedWritesWithCommit } from './prepared-read.ts';
import { isTuned } from './mode.ts';
import { noteWrite } from './replicas.ts';
import { refusalOf } from '../../platform/errors.ts';
import type { Ctx } from '../../platform/request-context.ts';

// A writing use case takes a TxCtx, and only `inTransaction`/`withTransaction` make one, so a write
// cannot run outside a transaction by construction (docs: docs/architecture.md "Request pipeline").

declare const inTransactionBrand: unique symbol;

/** An entity manager inside an open transaction (or a savepoint of one). */
export type TxEm = EntityManager & { readonly [inTransactionBrand]: true };

/** The context of a writing use case. */
export interface TxCtx extends Ctx {
  readonly em: TxEm;
}

/**
 * Runs `run` in a transaction; inside one already, in a savepoint that a thrown error rolls back.
 * Writes it queues (queueWrite, src/db/engine/prepared-read.ts) are sent before it ends: at the end
 * of a transaction, with its COMMIT. A refusal the database makes at COMMIT (a deferred check: an
 * overdraft of the business account; or a queued write's, such as the wallet's) is thrown as its
 * catalogue error (`refusalOf`), with everything the transaction wrote rolled back.
 */
export async function inTransaction<T>(ctx: Ctx, run: (tx: TxCtx) => Promise<T>): Promise<T> {
  // A nested transaction's savepoint comes after what the outer one queued.
  const nested = ctx.em.isInTransaction();
  if (!nested) {
    try {
      return await refusing(() => topLevel(ctx.em, (em) => withWriteQueue(em, () => runToTheEnd({ ...ctx, em: em as TxEm }, run, true))));
    } finally {
      // Committed or not, the caller's next reads come from the primary for a while (src/db/engine/replicas.ts).
      noteWrite(ctx.caller);
    }
  }
  await flushQueuedWrites(ctx.em);
  return refusing(() => nestedTransaction(ctx.em, (em) => withWriteQueue(em, () => runToTheEnd({ ...ctx, em: em as TxEm }, run, false))));
}

/**
 * The plain engine's top-level transaction: Kysely's `transaction().execute()` on a fork of `em`
 * given it as its transaction context (MikroORM's public `setTransactionContext`), the unit of work
 * flushed before COMMIT. Not `em.transactional`: it runs on Kysely's `startTransaction`, whose
 * connection goes back to the pool only after a COMMIT or ROLLBACK that succeeded, so a connection
 * lost mid-transaction (the database restarted or cut off) would never be given back and the pool
 * would run dry; Kysely's callback transaction gives it back whatever happens, and pg's pool drops
 * a broken one. (The tuned engine answers such a ROLLBACK itself: src/db/engine/edges-along.ts.)
 */
async function plainTopLevel<T>(em: EntityManager, run: (em: EntityManager) => Promise<T>): Promise<T> {
  const fork = em.fork();
  // Its edges logged as MikroORM logs its own (debug logging, the tests' statement log).
  const logger = fork.config.getLogger();
  const log = (query: string) => {
    if (logger.isEnabled('query')) logger.logQuery({ query });
  };
  try {
    const result = await fork
      .getConnection()
      .getClient()
      .transaction()
      .execute(async (transaction) => {
        log('begin');
        fork.setTransactionContext(transaction);
        try {
          const done = await run(fork);
          await fork.flush();
          return done;
        } finally {
          fork.resetTransactionContext();
        }
      });
    log('commit');
    return result;
  } catch (err) {
    log('rollback');
    throw err;
  }
}

/**
 * A transaction inside `em`'s: MikroORM's savepoint on a fork (tuned), or (plain) a savepoint by
 * SQL on `em` itself, since Kysely's callback transaction (plainTopLevel) has no savepoint API. What
 * the plain one wrote is flushed before its savepoint is released; a failure rolls back to it and
 * clears `em` (nothing of the rolled-back work may be flushed later), as inSavepoint does.
 */
async function nestedTransaction<T>(em: EntityManager, run: (em: EntityManager) => Promise<T>): Promise<T> {
  if (isTuned(em)) return em.transactional(run);
  const name = `nested_${++savepointCount}`;
  await em.execute(`savepoint ${name}`);
  try {
    const result = await run(em);
    await em.flush();
    await em.execute(`release savepoint ${name}`);
    return result;
  } catch (err) {
    // A rollback that fails (the connection gone) must not hide why the work failed; the transaction fails with it.
    await em.execute(`rollback to savepoint ${name}`).catch(() => undefined);
    em.clear();
    throw err;
  }
}

/**
 * A transaction of its own on a fork of `em` (the tuned engine): what `em.transactional` does for a top-level
 * transaction (a fork, BEGIN, the callback, a flush of the unit of work, COMMIT; ROLLBACK on an
 * error), by Kysely's own transaction, which the fork is given as its transaction context as
 * MikroORM does. Left out: the AsyncLocalStorage context, the propagation rules, the merge back
 * into `em` and the transaction events, which nothing here uses (a request's entity manager is its
 * own; no subscriber is registered), and the flush when the unit of work holds nothing (a booking
 * writes by SQL: src/db/engine/prepared-read.ts). Together they were a tenth of a booking's
 * allocations (docs/adr/0022-transaction-machinery.md).
 */
async function topLevel<T>(em: EntityManager, run: (em: EntityManager) => Promise<T>): Promise<T> {
  if (!isTuned(em)) return plainTopLevel(em, run);
  const fork = em.fork();
  const transaction = await fork.getConnection().getClient().startTransaction().execute();
  logStatement(fork, 'begin');
  fork.setTransactionContext(transaction);
  try {
    const result = await run(fork);
    if (holdsWork(fork)) await fork.flush();
    await transaction.commit().execute();
    logStatement(fork, 'commit');
    return result;
  } catch (err) {
    // A failing rollback (a connection gone) must not hide why the transaction failed.
    await transaction
      .rollback()
      .execute()
      .then(
        () => logStatement(fork, 'rollback'),
        () => {},
      );
    throw err;
  } finally {
    fork.resetTransactionContext();
  }
}

/** Whether a flush of `em` could write anything: an entity it manages, or one persisted or removed. */
function holdsWork(em: EntityManager): boolean {
  const work = em.getUnitOfWork();
  return (
    work.getIdentityMap().values().length > 0 ||
    work.getPersistStack().size > 0 ||
    work.getRemoveStack().size > 0 ||
    work.getOrphanRemoveStack().size > 0
  );
}

/** `run`, then the writes it queued: with COMMIT when this ends the transaction, else on their own (a savepoint). */
async function runToTheEnd<T>(ctx: Ctx & { em: TxEm }, run: (tx: TxCtx) => Promise<T>, endsTransaction: boolean): Promise<T> {
  const result = await run(ctx);
  await (endsTransaction ? queuedWritesWithCommit(ctx.em) : flushQueuedWrites(ctx.em));
  return result;
}

/** Runs `run` with `em`'s write queue open; what it queued and did not send is forgotten if it fails (its transaction rolls back). */
async function withWriteQueue<T>(em: EntityManager, run: () => Promise<T>): Promise<T> {
  openWriteQueue(em);
  try {
    return await run();
  } catch (err) {
    dropQueuedWrites(em);
    throw err;
  }
}

/** The same for operator and seed code, which has an entity manager but no request. */
export async function withTransaction<T>(em: EntityManager, run: (tx: TxEm) => Promise<T>): Promise<T> {
  const nested = em.isInTransaction();
  if (nested) await flushQueuedWrites(em);
  const body = (inner: EntityManager) =>
    withWriteQueue(inner, async () => {
      const result = await run(inner as TxEm);
      await (nested ? flushQueuedWrites(inner) : queuedWritesWithCommit(inner));
      return result;
    });
  if (nested) return refusing(() => nestedTransaction(em, body));
  return refusing(() => (isTuned(em) ? em.transactional(body) : plainTopLevel(em, body)));
}

/** A refusal the database made (src/platform/errors.ts `refusalOf`) as its catalogue error. */
async function refusing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw refusalOf(err) ?? err;
  }
}

// ---- Checks deferred to COMMIT ---------------------------------------------------------------
//
// A business-account ledger row moves the balance when its transaction commits (a deferred
// constraint trigger: src/modules/ledger/ledger.service.ts), so the account's row lock is held over
// COMMIT only. A savepoint that answers for its own writes (a GraphQL mutation field) must see the
// refusal inside it, so it settles such triggers at its end.

/** Per transaction (by its Kysely transaction), the deferred constraint triggers it has rows pending for. */
const unsettled = new WeakMap<object, Set<string>>();

/**
 * Notes that `em`'s transaction wrote a row the deferred constraint trigger `constraint` applies at
 * COMMIT (an identifier of the schema's, never input).
 */
export function deferredToCommit(em: TxEm, constraint: string): void {
  const transaction = em.getTransactionContext<object>();
  if (!transaction) return;
  let pending = unsettled.get(transaction);
  if (!pending) unsettled.set(transaction, (pending = new Set()));
  pending.add(constraint);
}

/**
 * Applies what `em`'s transaction deferred to COMMIT through those triggers now (SET CONSTRAINTS
 * … IMMEDIATE, which also holds for the rest of the transaction: a later row is applied at the end
 * of its statement), throwing their refusal here. Only those: other deferred checks (an access
 * code's visit names the code before the code is written) still wait for COMMIT. Nothing is sent
 * when nothing was deferred.
 */
export async function settleDeferred(em: TxEm): Promise<void> {
  const transaction = em.getTransactionContext<object>();
  const pending = transaction && unsettled.get(transaction);
  if (!pending || pending.size === 0) return;
  const constraints = [...pending].join(', ');
  pending.clear();
  await flushQueuedWrites(em);
  await refusing(() => em.execute(`set constraints ${constraints} immediate`));
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
  const tx = ctx as Ctx & { em: TxEm };
  const name = `use_case_${++savepointCount}`;
  // What was queued before belongs before the savepoint: a rollback to it must not take it.
  await flushQueuedWrites(tx.em);
  await tx.em.execute(`savepoint ${name}`);
  try {
    // The writes `run` queues, and the checks it deferred, end with the savepoint: a field's refusal is that field's answer.
    const result = await runToTheEnd(tx, run, false);
    await settleDeferred(tx.em);
    return result;
  } catch (err) {
    dropQueuedWrites(tx.em);
    await tx.em.execute(`rollback to savepoint ${name}`);
    tx.em.clear(); // nothing of the rolled-back work may be flushed later
    throw err;
  }
}

/**
 * PostgreSQL aborts one transaction of a deadlock (40P01) or a serialization conflict (40001); what
 * it did is gone, so running it again is safe. Lock waits that time out (55P03) are answers, not
 * retried.
 */
const RETRYABLE_SQLSTATES = new Set(['40P01', '40001']);
export const RETRY_ATTEMPTS = 3;

export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE_SQLSTATES.has(code);
}

/** Runs `attempt` again (up to RETRY_ATTEMPTS in all) when PostgreSQL aborted it to break a deadlock. */
export async function retryingConflicts<T>(attempt: (n: number) => Promise<T>, onRetry: (err: unknown, n: number) => void): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= RETRY_ATTEMPTS || !isRetryableConflict(err)) throw err;
      onRetry(err, n);
    }
  }
}
