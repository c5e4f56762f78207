import { GraphQLError } from 'graphql';
import { DomainError, errorExtensions, validationError } from '../platform/errors.ts';

// Every answer of /graphql carries a catalogue code (docs/errors.md "GraphQL over HTTP"): yoga's
// own transport failures (a body it cannot read, a wrong method, an operation it cannot pick) come
// with its codes BAD_REQUEST and OPERATION_RESOLUTION_FAILURE; they leave as the catalogue's.

/** The GraphQL-over-HTTP body parameter a yoga message names, e.g. `Expected "variables" param …`. */
const NAMED_PARAM = /"(query|variables|operationName|extensions)" param/;

/** yoga's transport error as the catalogue error it is, or undefined for any other error. */
export function transportError(error: GraphQLError): DomainError | undefined {
  const code = error.extensions?.code;
  if (code === 'OPERATION_RESOLUTION_FAILURE') {
    return validationError(
      'operationName',
      "Could not determine which operation to run: name one of the document's operations in operationName",
    );
  }
  if (code !== 'BAD_REQUEST') return undefined;
  const { message } = error;
  if (/only perform a mutation operation from a POST request/.test(message)) {
    return new DomainError('method_not_allowed', 'A mutation is sent with POST', { headers: { Allow: 'POST' } });
  }
  if (/only supports GET and POST/.test(message)) {
    return new DomainError('method_not_allowed', 'GraphQL is served over GET and POST', { headers: { Allow: 'GET, POST' } });
  }
  if (/Must provide query string/.test(message)) return validationError('query', 'A GraphQL document is required in `query`');
  const named = NAMED_PARAM.exec(message)?.[1];
  if (named) return validationError(named, message);
  if (/invalid JSON/.test(message)) return validationError('body', 'The body is not valid JSON');
  if (/Batching is not supported/.test(message))
    return validationError('body', 'Send one operation per request (a JSON object), not a batch');
  return validationError('body', message.replace(/\.$/, ''));
}

/** A catalogue error in the GraphQL-over-HTTP error shape, its status and headers under `extensions.http`. */
export function asGraphQLError(err: DomainError, requestId?: string): GraphQLError {
  const http = { status: err.status, ...(err.headers ? { headers: err.headers } : {}) };
  return new GraphQLError(err.message, { extensions: { ...errorExtensions(err, requestId), http } });
}

/** The body types /graphql reads (yoga's parsers, less the ones a browser sends cross-origin without a preflight, below). */
const BODY_TYPES = new Set(['application/json', 'application/graphql+json', 'application/graphql']);

/**
 * The types an HTML form or a plain `fetch` may send to another origin without a CORS preflight:
 * refused, so a page elsewhere can never have a browser run an operation here (CSRF; docs/errors.md
 * "GraphQL over HTTP"). Checked before authentication, so nothing in such a body is ever read.
 */
const SIMPLE_REQUEST_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

/** A POST body of a type /graphql does not read: 415, with the error body yoga would not give. */
export function checkBodyType(contentType: string | undefined): void {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (SIMPLE_REQUEST_TYPES.has(type)) {
    throw new DomainError(
      'unsupported_media_type',
      `Content-Type ${type} is not accepted: a browser sends it from any site without a CORS preflight; send application/json`,
    );
  }
  if (!BODY_TYPES.has(type)) {
    throw new DomainError(
      'unsupported_media_type',
      `${type === '' ? 'A body without Content-Type' : `Content-Type ${type}`} is not accepted; send application/json`,
    );
  }
}

/** GET's JSON parameters, which yoga would parse into an unexpected failure. */
export function checkGetParams(params: URLSearchParams): void {
  for (const name of ['variables', 'extensions'] as const) {
    const raw = params.get(name);
    if (raw === null || raw === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw validationError(name, `${name} is not valid JSON`);
    }
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed)))
      throw validationError(name, `${name} must be a JSON object`);
  }
}
