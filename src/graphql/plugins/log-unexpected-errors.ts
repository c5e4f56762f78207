import { GraphQLError } from 'graphql';
import { useErrorHandler } from 'graphql-yoga';
import { DomainError } from '../../platform/errors.ts';
import type { Pipeline } from '../../platform/pipeline.ts';
import type { Ctx } from '../../platform/request-context.ts';
import { GraphQLDomainError, isGraphQLError } from '../errors.ts';

/** Unexpected resolver failures are masked for the caller; the log keeps them, with the request id. */
export function useLogUnexpectedErrors(pipeline: Pipeline) {
  return useErrorHandler(({ errors, context }) => {
    // Partial: an error of parsing or validation comes before yoga builds the use-case context.
    const ctx: Partial<Ctx> = context;
    for (const error of errors) {
      const original = (isGraphQLError(error) ? error.originalError : undefined) ?? error;
      if (original instanceof DomainError || original instanceof GraphQLDomainError) continue;
      if (error instanceof GraphQLError && !error.originalError) continue; // a validation error, not a failure
      if (pipeline.unavailable(original)) continue; // logged once when the database went down
      ctx.log?.error({ err: original, path: isGraphQLError(error) ? error.path : undefined }, 'graphql resolver failed');
    }
  });
}
