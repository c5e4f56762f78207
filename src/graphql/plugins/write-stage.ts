import { getOperationAST, type ExecutionResult } from 'graphql';
import { isAsyncIterable } from 'graphql-yoga';
import { DomainError, validationError } from '../../platform/errors.ts';
import { checkIdempotencyKey, fingerprint, UnstoredResponse } from '../../platform/idempotency.ts';
import type { Pipeline } from '../../platform/pipeline.ts';
import type { ExecutionPlugin } from '../context.ts';
import { asGraphQLError } from '../transport-errors.ts';
import { rootFields } from './root-fields.ts';

/**
 * A mutation runs in the pipeline's write stage (src/platform/pipeline.ts), decided from what yoga
 * parsed, whatever the body format: the Idempotency-Key, one transaction, the stored record.
 * It wraps whatever executor is current, graphql-jit's among them (src/graphql/compiled-execution.ts).
 */
export function useWriteStage(pipeline: Pipeline): ExecutionPlugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation') return;
      const context = args.contextValue;

      setExecuteFn(async (execArgs) => {
        const { params, requestId } = context;
        try {
          if (context.rawIdempotencyKey !== undefined && rootFields(args.schema, args.document, operation).some((f) => f.secretOnce)) {
            throw validationError(
              'Idempotency-Key',
              'This mutation shows a secret once and takes no Idempotency-Key: its answer is never stored',
            );
          }
          const written = await pipeline.write(
            { ...context, idempotencyKey: checkIdempotencyKey(context.rawIdempotencyKey) },
            () => fingerprint('graphql', params.query, params.variables ?? {}, params.operationName ?? null),
            async (tx) => {
              const result = await executeFn({ ...execArgs, contextValue: { ...context, ...tx } });
              // The schema has no @defer or @stream: a mutation answers one result.
              if (isAsyncIterable(result)) throw new Error('A mutation answered a stream of results');
              const response = { status: 200, body: result };
              // Top-level errors (unexpected failures) are not stored: roll back so a retry re-executes.
              if (result.errors?.length) throw new UnstoredResponse(response);
              return response;
            },
            // Each mutation field runs in its own savepoint (runMutation) and answers its domain errors as
            // typed results; a domain error reaching here failed the whole operation.
            (err) => ({ status: err.status, body: { errors: [asGraphQLError(err, requestId)] } }),
          );
          const body = executionResult(written.body);
          // A replay is the stored result byte for byte; the header travels in yoga's `http` extension,
          // which yoga strips from the body.
          return written.replayed
            ? { ...body, extensions: { ...body.extensions, http: { headers: { 'X-Idempotent-Replayed': 'true' } } } }
            : body;
        } catch (err) {
          // A malformed key (400), a key reused with another request or still in progress (409),
          // the database unreachable (503 with Retry-After).
          const known = err instanceof DomainError ? err : pipeline.unavailable(err);
          if (known) return { errors: [asGraphQLError(known, requestId)] };
          throw err;
        }
      });
    },
  };
}

/** The body the write stage answered: an execution result, or its replay as the record stored it (JSON, so an object). */
function executionResult(body: unknown): ExecutionResult {
  if (typeof body !== 'object' || body === null) throw new Error('An idempotency record of a mutation holds no execution result');
  return body;
}
