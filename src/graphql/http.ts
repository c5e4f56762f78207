import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError, graphqlErrorBody } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Pipeline } from '../platform/pipeline.ts';
import type { Caller } from '../platform/request-context.ts';
import { checkUtf8, parseQueryString } from '../platform/text.ts';
import { header, readBody, sendJson } from '../rest/http.ts';
import type { GraphQLServer } from './yoga.ts';
import { clientAddress } from '../platform/client-address.ts';
import { checkBodyType, checkGetParams } from './transport-errors.ts';
import type { CorsPolicy } from './cors.ts';
import type { LiveEvents } from '../modules/events/index.ts';
import { RETRY_AFTER_SECONDS } from '../platform/unavailable.ts';

/**
 * GraphQL over HTTP, the pipeline's first two stages: a CORS preflight from a listed origin is
 * answered (src/graphql/cors.ts); read and check the transport input (body
 * limit, body type, the text rule on the bytes), authenticate (a top-level 401/403), then yoga parses the
 * request in whatever format it takes and runs it; mutations go through the pipeline's write stage
 * (src/graphql/plugins/write-stage.ts), so every body format meets the same idempotency rules.
 */
export async function handleGraphQL(
  pipeline: Pipeline,
  yoga: GraphQLServer,
  cors: CorsPolicy,
  live: LiveEvents,
  req: IncomingMessage,
  res: ServerResponse,
  search: string,
  requestId: string,
  log: Logger,
): Promise<void> {
  let origin: string | undefined;
  let caller: Caller | undefined;
  try {
    if (await cors.preflight(req, res)) return;
    // A browser (Accept: text/html) gets GraphiQL, also with ?query= prefilled; API clients ask for JSON.
    if (req.method === 'GET' && (header(req, 'accept') ?? '').includes('text/html')) {
      return await yoga.handle(req, res, { requestId });
    }
    origin = await cors.listedOrigin(req);
    const raw = req.method === 'POST' ? await readBody(req, pipeline.bodyLimit) : Buffer.alloc(0);
    checkTransportText(req, raw, search);
    // GraphQL is the reseller surface: a provider key is refused here, 403, before anything runs. A
    // Service-Lookup-Token is read here; plugins/lookup-token-scope.ts refuses it, 403, unless every root field takes one.
    // A client-session token (Bearer cs_…) is taken here only; plugins/client-session-scope.ts holds it to its scopes.
    caller = await pipeline.authenticate(
      { authorization: header(req, 'authorization'), lookupToken: header(req, 'service-lookup-token') },
      'reseller',
      { takesLookupToken: true, takesClientSession: true, address: clientAddress(req, pipeline.trustProxy) },
    );
    cors.allow(res, origin, caller);
    // The Idempotency-Key is checked only for a mutation (docs/errors.md "Idempotency": ignored on queries), by plugins/write-stage.ts.
    const ctx = pipeline.context(caller, { requestId, log, host: header(req, 'host') });
    // A stream (a subscription, docs/partner-guide.md "Live booking status") takes one of the process's places until it closes.
    if ((header(req, 'accept') ?? '').includes('text/event-stream')) {
      const release = live.admit();
      if (!release) {
        throw new DomainError(
          'too_many_subscriptions',
          'This server holds as many open subscriptions as it serves; retry after Retry-After seconds',
          { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
        );
      }
      res.once('close', release);
    }
    // Already read: yoga's node adapter takes a Uint8Array `body` instead of the consumed stream.
    if (raw.length > 0) Object.assign(req, { body: new Uint8Array(raw.buffer, raw.byteOffset, raw.length) });
    return await yoga.handle(req, res, {
      ctx,
      rawIdempotencyKey: header(req, 'idempotency-key'),
      live,
      lastEventId: header(req, 'last-event-id') || undefined,
    });
  } catch (thrown) {
    // The database unreachable while authenticating is 503 `service_unavailable`, in this shape too.
    const err = thrown instanceof DomainError ? thrown : pipeline.unavailable(thrown);
    if (!err) throw thrown;
    // Before the caller is known (401, 429), a listed origin may read the error ("token expired").
    if (caller === undefined) cors.allow(res, origin, undefined);
    // GraphQL-over-HTTP shape for errors raised before execution (auth, body).
    return sendJson(res, err.status, graphqlErrorBody(err, requestId), {
      'Content-Type': 'application/graphql-response+json; charset=utf-8',
      ...(err.headers ?? {}),
    });
  }
}

/**
 * The text rule on the transport: bytes must be UTF-8 and percent-encoding strict before yoga
 * decodes them (it would put U+FFFD in their place). Parsed strings are checked by plugins/text-rule.ts.
 */
function checkTransportText(req: IncomingMessage, raw: Buffer, search: string): void {
  const params = parseQueryString(search);
  if (req.method === 'GET') checkGetParams(params);
  if (req.method !== 'POST') return;
  // A body type yoga has no parser for would be its 415 with an empty body; the types a browser sends
  // cross-origin without a preflight (a form, text/plain) are refused too: CSRF.
  checkBodyType(header(req, 'content-type'));
  if (raw.length > 0) checkUtf8(raw); // yoga decodes it: only checked here, without making a string
}
