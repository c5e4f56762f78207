import type { ClientSessionScopeName, Ctx } from '../platform/request-context.ts';
import { inSavepoint, retryingConflicts, type TxCtx } from '../db/engine/index.ts';
import { asGraphQLErrors } from './errors.ts';

/**
 * Runs one mutation field's use case in a savepoint of the operation's transaction (the pipeline
 * opens it: src/platform/pipeline.ts), with domain errors typed for the result union, so a field
 * that fails leaves nothing behind while the others keep their effects. A field PostgreSQL aborted
 * to break a deadlock was rolled back to its savepoint, so it runs again there.
 */
export function runMutation<T>(ctx: Ctx, useCase: (tx: TxCtx) => Promise<T>): Promise<T> {
  return asGraphQLErrors(() =>
    retryingConflicts(
      () => inSavepoint(ctx, useCase),
      (err, n) =>
        ctx.log.warn(
          { sqlstate: (err as { code: string }).code, attempt: n },
          'mutation field aborted by PostgreSQL to break a deadlock; running it again',
        ),
    ),
  );
}

/** Queries: domain errors (not found, bad cursor) become top-level errors with their code. */
export { asGraphQLErrors as runQuery };

/** Single-object queries answer null for ids this caller cannot see, as node(id:) does. */
export function nullWhenNotFound(err: unknown): null {
  if ((err as { code?: string }).code === 'resource_not_found') return null;
  throw err;
}

/**
 * Field extensions the pipeline's plugins read (src/graphql/plugins/root-fields.ts), the GraphQL side of
 * a REST route's declaration (src/rest/route.ts):
 * - `takesLookupToken`: a root field a Service-Lookup-Token caller may select (docs/partner-guide.md "Lookup"); an
 *   operation with a token and any other root field is a top-level 403 `permission_denied`, nothing run.
 * - `showsSecretOnce`: a mutation whose answer shows a secret once (a lookup token): it takes no
 *   Idempotency-Key, so its answer is never stored (400 `validation_error` on `Idempotency-Key`).
 * - `clientSession`: a root field a client-session token may select, and the scope it needs
 *   (docs/partner-guide.md "Client sessions"); an operation with such a token and any other root
 *   field, or one whose scope the token lacks, is a top-level 403 `permission_denied`, nothing run
 *   (src/graphql/plugins/client-session-scope.ts). The use case still holds the token to its one client.
 */
export const takesLookupToken = { takesLookupToken: true } as const;
export const showsSecretOnce = { showsSecretOnce: true } as const;
export const forClientSession = <S extends ClientSessionScopeName>(scope: S) => ({ clientSession: scope }) as const;

declare module 'graphql' {
  interface GraphQLFieldExtensions<_TSource, _TContext, _TArgs> {
    takesLookupToken?: true;
    showsSecretOnce?: true;
    clientSession?: ClientSessionScopeName;
  }
}
