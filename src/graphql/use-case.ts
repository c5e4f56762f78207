import type { Ctx } from '../platform/request-context.ts';
import { asGraphQLErrors } from './errors.ts';

/**
 * Runs one mutation's use case in its own transaction (a savepoint when the request already
 * holds an idempotency transaction), with domain errors typed for the result union.
 */
export function runMutation<T>(ctx: Ctx, useCase: (ctx: Ctx) => Promise<T>): Promise<T> {
  return asGraphQLErrors(() => ctx.em.transactional((em) => useCase({ ...ctx, em })));
}

/** Queries: domain errors (not found, bad cursor) become top-level errors with their code. */
export { asGraphQLErrors as runQuery };

/** Single-object queries answer null for ids this caller cannot see, as node(id:) does. */
export function nullWhenNotFound(err: unknown): null {
  if ((err as { code?: string }).code === 'resource_not_found') return null;
  throw err;
}
