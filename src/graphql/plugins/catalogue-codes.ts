import type { GraphQLError, GraphQLErrorExtensions } from 'graphql';
import type { RequestPlugin } from '../context.ts';
import { restated } from '../errors.ts';

/** graphql-js's and yoga's codes for a document or variables the request got wrong. */
const REQUEST_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

/**
 * Every error leaves with a catalogue code (docs/errors.md "GraphQL over HTTP"): a document that
 * fails parsing or validation (including literal coercion), or a request whose variables fail
 * coercion (no `data` at all), is `validation_error`, a 400 under
 * `application/graphql-response+json`; `internal_error` carries the request id so a report can be
 * matched with the log.
 */
export function useCatalogueCodes(): RequestPlugin {
  return {
    onResultProcess({ result, setResult, serverContext }) {
      if (Array.isArray(result) || !('errors' in result) || !result.errors?.length) return;
      const requestId = serverContext.ctx?.requestId ?? serverContext.requestId;
      setResult({ ...result, errors: result.errors.map((e) => withCatalogueCode(e, !('data' in result), requestId)) });
    },
  };
}

function withCatalogueCode(error: GraphQLError, requestFailed: boolean, requestId: string | undefined): GraphQLError {
  const extensions: GraphQLErrorExtensions = { ...error.extensions };
  const { code } = extensions;
  if (code === 'internal_error') {
    if (requestId) extensions.request_id = requestId;
  } else if (code === undefined || REQUEST_ERROR_CODES.has(code)) {
    if (!requestFailed) return error;
    extensions.code = 'validation_error';
    extensions.type = 'invalid_request_error';
    const http = extensions.http ?? {};
    extensions.http = { ...http, status: http.status ?? 400, spec: http.spec ?? true };
  } else if (code === 'validation_error') {
    extensions.type ??= 'invalid_request_error';
  } else {
    return error;
  }
  return restated(error, error.message, extensions, true);
}
