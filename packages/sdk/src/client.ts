import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';

// A fetch-based GraphQL client for a partner frontend holding a client-session token
// (docs/partner-guide.md "Client sessions"). It retries nothing by itself: a booking or a cancel
// moves credits, visits and money, and a request that failed on the way back may have run. To retry
// a mutation safely, send it again with the same `idempotencyKey` (docs/errors.md "Idempotency").
// A subscription reconnects only when its caller asks (`resume`): resuming from the last event id
// is safe, it moves nothing, but a caller that did not ask should hear of the drop.

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

export interface SubscribeOptions {
  /** Start after this event (`evt_…`, an earlier message's `eventId`): sent as `Last-Event-ID`, the events since come first. */
  lastEventId?: string;
  /** Ends the subscription: the connection closes and the iteration ends without an error. */
  signal?: AbortSignal;
  /**
   * Reconnect when the connection drops (a network failure, a stream cut before `complete`, a 5xx or
   * 429 answer to a reconnect) or the gateway ends the stream (`complete`: a stopping instance) with
   * `Last-Event-ID` = the last id received, after 0.5 s, 1 s, 2 s … at most 10 s: the gateway sends
   * what was missed first, so nothing is lost or repeated. Off by default: the iteration then throws
   * on a drop and ends on `complete`, and the caller decides.
   */
  resume?: boolean;
}

/** One message of a subscription: its `data` and the event's id (the SSE `id:`), to resume after. */
export interface SubscriptionEvent<TResult> {
  eventId: string;
  data: TResult;
}

type SubscribeArgs<TVariables> =
  Record<string, never> extends TVariables
    ? [variables?: TVariables, options?: SubscribeOptions]
    : [variables: TVariables, options?: SubscribeOptions];

export interface Client {
  /** Runs one operation; resolves to its `data`, or rejects with a GatewayError when the gateway answered `errors`. */
  request<TResult, TVariables>(document: Document<TResult, TVariables>, ...args: RequestArgs<TVariables>): Promise<TResult>;
  /**
   * Runs a subscription (`WatchBookingStatus`, `WatchAccessCodeRedeemed`) over Server-Sent Events
   * (docs/partner-guide.md "Live booking status"): each event as it commits, until the gateway
   * sends `complete`, `options.signal` aborts or the loop breaks. Throws a GatewayError when the
   * gateway refuses it (an expired token, an unknown `lastEventId`: `validation_error`).
   */
  subscribe<TResult, TVariables>(
    document: Document<TResult, TVariables>,
    ...args: SubscribeArgs<TVariables>
  ): AsyncIterable<SubscriptionEvent<TResult>>;
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
  const bodyOf = (document: Document<unknown, never>, variables: unknown) =>
    JSON.stringify(
      persisted
        ? { documentId: persistedId(document), variables: variables ?? {} }
        : { query: documentText(document), variables: variables ?? {} },
    );

  return {
    async request<TResult, TVariables>(document: Document<TResult, TVariables>, ...[variables, opts]: RequestArgs<TVariables>) {
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        // The GraphQL-over-HTTP media type makes a refused document a 4xx, not a 200 (docs/errors.md "GraphQL").
        Accept: 'application/graphql-response+json, application/json',
        Authorization: `Bearer ${await getToken()}`,
      };
      if (opts?.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;

      const response = await send(url, { method: 'POST', headers, body: bodyOf(document, variables), signal: opts?.signal });
      const text = await response.text();
      const refused = refusalOf(response.status, text);
      if (refused !== undefined) throw refused;
      const data = (JSON.parse(text) as GraphQLResponse).data;
      if (data === undefined || data === null) {
        throw new GatewayError(response.status, [], `The gateway answered HTTP ${response.status} with neither data nor errors`);
      }
      return data as TResult;
    },

    subscribe<TResult, TVariables>(document: Document<TResult, TVariables>, ...[variables, opts]: SubscribeArgs<TVariables>) {
      const body = bodyOf(document, variables);
      return {
        [Symbol.asyncIterator]: () => subscription<TResult>(send, url, getToken, body, opts ?? {}),
      };
    },
  };
}

/** The GatewayError an answer carries (`errors`, or the REST envelope), or undefined when it is a GraphQL response without errors. */
function refusalOf(status: number, text: string): GatewayError | undefined {
  let parsed: GraphQLResponse | undefined;
  try {
    parsed = JSON.parse(text) as GraphQLResponse;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
    return new GatewayError(status, [], `The gateway answered HTTP ${status} with no GraphQL response`);
  }
  if (Array.isArray(parsed.errors) && parsed.errors.length > 0) return new GatewayError(status, parsed.errors);
  // What the gateway answers before GraphQL reads the request (a wrong path, headers too large) is
  // in the REST envelope (docs/errors.md "Transport errors"): the same fields, under `error`.
  const envelope = parsed.error;
  if (typeof envelope === 'object' && envelope !== null && typeof envelope.code === 'string') {
    return new GatewayError(status, [{ message: envelope.message ?? '', extensions: envelope }]);
  }
  return undefined;
}

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

/**
 * One subscription: a POST answered by an event stream (GraphQL over SSE, "distinct connections":
 * `event: next` with the result as `data:`, `event: complete` at the end, `id:` the event id).
 * With `resume`, a drop reconnects with `Last-Event-ID`; the gateway sends the events after it
 * first, so the caller sees each event once, in order (docs/partner-guide.md "Resume without loss").
 */
async function* subscription<TResult>(
  send: typeof fetch,
  url: string,
  getToken: ClientOptions['getToken'],
  body: string,
  opts: SubscribeOptions,
): AsyncGenerator<SubscriptionEvent<TResult>> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  let lastEventId = opts.lastEventId;
  let failures = 0;
  try {
    for (;;) {
      if (stop.signal.aborted) return;
      let dropped: unknown;
      try {
        const headers: Record<string, string> = {
          'Content-Type': 'application/json',
          Accept: 'text/event-stream',
          Authorization: `Bearer ${await getToken()}`,
        };
        if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
        const response = await send(url, { method: 'POST', headers, body, signal: stop.signal });
        const stream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream') ? response.body : null;
        if (response.status !== 200 || stream === null) {
          // A refusal before any event (a bad `after`: 400) may come as a stream of one `next` with `errors`.
          const text = stream === null ? await response.text() : await firstResult(stream);
          const refused =
            refusalOf(response.status, text) ??
            new GatewayError(response.status, [], `The gateway answered HTTP ${response.status} with no event stream`);
          // 429 and 5xx (`too_many_subscriptions`, a restarting instance) may pass; any other refusal stays.
          if (!opts.resume || (response.status !== 429 && response.status < 500)) throw refused;
          dropped = refused;
        } else {
          let completed = false;
          for await (const message of sseMessages(stream)) {
            if (message.event === 'complete') {
              completed = true;
              break;
            }
            if (message.event !== 'next') continue;
            const payload = JSON.parse(message.data) as GraphQLResponse;
            if (Array.isArray(payload.errors) && payload.errors.length > 0) throw new GatewayError(200, payload.errors);
            lastEventId = message.id ?? lastEventId;
            failures = 0;
            yield { eventId: lastEventId ?? '', data: payload.data as TResult };
          }
          // The gateway's subscriptions never finish by themselves: `complete` is a stopping server
          // (or one cutting off a reader that fell behind). Without `resume` it ends the iteration;
          // with it, it is a reconnect from the last id, to whichever instance answers now.
          if (completed && !opts.resume) return;
          if (!completed) dropped = new TypeError('The event stream ended before `complete`');
        }
      } catch (error) {
        if (stop.signal.aborted) return;
        // A refusal, a malformed message: not a drop. A network failure (fetch's TypeError, an aborted read) is.
        if (error instanceof GatewayError || error instanceof SyntaxError || !opts.resume) throw error;
        dropped = error;
      }
      if (!opts.resume) throw dropped;
      await sleep(Math.min(FIRST_RETRY_MS * 2 ** failures, MAX_RETRY_MS), stop.signal);
      failures += 1;
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    // Breaking out of the loop (or an error) closes the connection.
    stop.abort();
  }
}

interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** The messages of an event stream (the HTML "server-sent events" format), comments skipped. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message: SseMessage = { data: '' };
        const data: string[] = [];
        let fields = 0;
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          fields += 1;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') message.id = value;
          else if (field === 'event') message.event = value;
          else if (field === 'data') data.push(value);
        }
        message.data = data.join('\n');
        if (fields > 0) yield message;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** The `data` of a stream's first `next` message ('' when it has none). */
async function firstResult(stream: ReadableStream<Uint8Array>): Promise<string> {
  try {
    for await (const message of sseMessages(stream)) if (message.event === 'next') return message.data;
    return '';
  } finally {
    // The rest of a refused stream is not read: close it rather than leave the connection open.
    await stream.cancel().catch(() => undefined);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
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
