import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';

// A fetch-based GraphQL client for a partner frontend holding a client-session token
// (docs/partner-guide.md "Client sessions"). It retries nothing by itself: a booking or a cancel
// moves credits, visits and money, and a request that failed on the way back may have run. To retry
// a mutation safely, send it again with the same `idempotencyKey` (docs/errors.md "Idempotency").

/** A document from this SDK's `graphql()` (src/operations.ts): its text, typed result and variables, and its persisted id. */
export type Document<TResult, TVariables> = DocumentTypeDecoration<TResult, TVariables> & {
  toString(): string;
  readonly __meta__?: { readonly hash?: string } | Record<string, unknown>;
};

export interface ClientOptions {
  /** The gateway's GraphQL endpoint, e.g. `https://gateway.example.com/graphql`. */
  url: string;
  /** The client-session token (`cs_…`), read before every request so an expired one can be replaced. */
  getToken: () => string | Promise<string>;
  /** A fetch implementation; the global one when not given. */
  fetch?: typeof fetch;
  /**
   * Send each operation by its id (`documentId: "sha256:…"`) instead of its text: for a reseller that
   * accepts only its registered operations (src/gql/persisted-documents.json is the list to register).
   */
  persisted?: boolean;
}

export interface RequestOptions {
  /** Sent as the `Idempotency-Key` header of a mutation: a retry with the same key runs the mutation once. */
  idempotencyKey?: string;
  /** Aborts the request; the mutation may still have run on the server. */
  signal?: AbortSignal;
}

/** The variables argument is optional exactly when the operation has no required variable. */
type RequestArgs<TVariables> =
  Record<string, never> extends TVariables
    ? [variables?: TVariables, options?: RequestOptions]
    : [variables: TVariables, options?: RequestOptions];

export interface Client {
  /** Runs one operation; resolves to its `data`, or rejects with a GatewayError when the gateway answered `errors`. */
  request<TResult, TVariables>(document: Document<TResult, TVariables>, ...args: RequestArgs<TVariables>): Promise<TResult>;
}

/** One entry of a GraphQL response's `errors` (docs/errors.md "GraphQL"). */
export interface GraphQLErrorEntry {
  message: string;
  path?: readonly (string | number)[];
  extensions?: { code?: string; type?: string; message?: string; request_id?: string; param?: string; [key: string]: unknown };
}

/**
 * The gateway refused the request as a whole: the first error's catalogue `code` (docs/errors.md:
 * `invalid_api_key`, `permission_denied`, `validation_error`, `rate_limited` …) with its HTTP status
 * and `requestId`, which finds the request in the gateway's logs. A mutation's own refusals
 * (`class_full`, `already_cancelled` …) are not thrown: they are members of its result union.
 */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  /** The catalogue code, or `unexpected_response` when the answer was not a GraphQL response (a proxy's error page, say). */
  readonly code: string;
  /** The catalogue's error type (`authentication_error`, `invalid_request_error` …), when the gateway sent one. */
  readonly type: string | undefined;
  /** The input at fault, when one is (`first`, `Idempotency-Key` …). */
  readonly param: string | undefined;
  /** The `req_…` id of the request. */
  readonly requestId: string | undefined;
  /** The HTTP status of the response (200 for an error beside `data: null`, e.g. a bad cursor). */
  readonly status: number;
  /** Every error of the response, the first of which this is. */
  readonly errors: readonly GraphQLErrorEntry[];

  constructor(status: number, errors: readonly GraphQLErrorEntry[], fallbackMessage?: string) {
    const first = errors[0];
    super(first?.extensions?.message ?? first?.message ?? fallbackMessage ?? `HTTP ${status}`);
    this.code = first?.extensions?.code ?? 'unexpected_response';
    this.type = first?.extensions?.type;
    this.param = first?.extensions?.param;
    this.requestId = first?.extensions?.request_id;
    this.status = status;
    this.errors = errors;
  }
}

interface GraphQLResponse {
  data?: unknown;
  errors?: GraphQLErrorEntry[];
  error?: GraphQLErrorEntry['extensions'];
}

export function createClient(options: ClientOptions): Client {
  const { url, getToken, persisted = false } = options;
  const send = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));

  return {
    async request<TResult, TVariables>(document: Document<TResult, TVariables>, ...[variables, opts]: RequestArgs<TVariables>) {
      const body: Record<string, unknown> = { variables: variables ?? {} };
      if (persisted) body.documentId = persistedId(document);
      else body.query = documentText(document);
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        // The GraphQL-over-HTTP media type makes a refused document a 4xx, not a 200 (docs/errors.md "GraphQL").
        Accept: 'application/graphql-response+json, application/json',
        Authorization: `Bearer ${await getToken()}`,
      };
      if (opts?.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;

      const response = await send(url, { method: 'POST', headers, body: JSON.stringify(body), signal: opts?.signal });
      const text = await response.text();
      let parsed: GraphQLResponse | undefined;
      try {
        parsed = JSON.parse(text) as GraphQLResponse;
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
        throw new GatewayError(response.status, [], `The gateway answered HTTP ${response.status} with no GraphQL response`);
      }
      if (Array.isArray(parsed.errors) && parsed.errors.length > 0) throw new GatewayError(response.status, parsed.errors);
      // What the gateway answers before GraphQL reads the request (a wrong path, headers too large) is
      // in the REST envelope (docs/errors.md "Transport errors"): the same fields, under `error`.
      const envelope = parsed.error;
      if (typeof envelope === 'object' && envelope !== null && typeof envelope.code === 'string') {
        throw new GatewayError(response.status, [{ message: envelope.message ?? '', extensions: envelope }]);
      }
      if (parsed.data === undefined || parsed.data === null) {
        throw new GatewayError(response.status, [], `The gateway answered HTTP ${response.status} with neither data nor errors`);
      }
      return parsed.data as TResult;
    },
  };
}

function documentText(document: Document<unknown, never>): string {
  // A TypedDocumentString is a String; a parsed DocumentNode would print as "[object Object]".
  if (typeof document !== 'string' && !(document instanceof String)) {
    throw new TypeError('createClient().request takes the documents of this SDK (src/operations.ts), which are strings');
  }
  return document.toString();
}

function persistedId(document: Document<unknown, never>): string {
  const hash = (document.__meta__ as { hash?: unknown } | undefined)?.hash;
  if (typeof hash !== 'string') {
    throw new TypeError('persisted: true needs a document generated with its persisted id (npm run sdk:generate)');
  }
  return hash;
}
