import type { Ctx } from '../platform/request-context.ts';
import { inSavepoint, type TxCtx } from '../platform/transaction.ts';
import { asGraphQLErrors } from './errors.ts';

/**
 * Runs one mutation field's use case in a savepoint of the operation's transaction (the pipeline
 * opens it: src/graphql/idempotent-mutations.ts), with domain errors typed for the result union,
 * so a field that fails leaves nothing behind while the others keep their effects.
 */
export function runMutation<T>(ctx: Ctx, useCase: (tx: TxCtx) => Promise<T>): Promise<T> {
  return asGraphQLErrors(() => inSavepoint(ctx, useCase));
}

/** Queries: domain errors (not found, bad cursor) become top-level errors with their code. */
export { asGraphQLErrors as runQuery };

/** Single-object queries answer null for ids this caller cannot see, as node(id:) does. */
export function nullWhenNotFound(err: unknown): null {
  if ((err as { code?: string }).code === 'resource_not_found') return null;
  throw err;
}
