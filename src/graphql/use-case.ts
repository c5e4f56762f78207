import type { Ctx } from '../platform/request-context.ts';
import { inSavepoint, retryingConflicts, type TxCtx } from '../platform/transaction.ts';
import { asGraphQLErrors } from './errors.ts';

/**
 * Runs one mutation field's use case in a savepoint of the operation's transaction (the pipeline
 * opens it: src/platform/pipeline.ts), with domain errors typed for the result union, so a field
 * that fails leaves nothing behind while the others keep their effects. A field PostgreSQL aborted
 * to break a deadlock was rolled back to its savepoint, so it runs again there.
 */
export function runMutation<T>(ctx: Ctx, useCase: (tx: TxCtx) => Promise<T>): Promise<T> {
  return asGraphQLErrors(() => retryingConflicts(
    () => inSavepoint(ctx, useCase),
    (err, n) => ctx.log.warn({ sqlstate: (err as { code: string }).code, attempt: n }, 'mutation field aborted by PostgreSQL to break a deadlock; running it again'),
  ));
}

/** Queries: domain errors (not found, bad cursor) become top-level errors with their code. */
export { asGraphQLErrors as runQuery };

/** Single-object queries answer null for ids this caller cannot see, as node(id:) does. */
export function nullWhenNotFound(err: unknown): null {
  if ((err as { code?: string }).code === 'resource_not_found') return null;
  throw err;
}
