import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { listedCorsOrigins } from '../modules/resellers/index.ts';
import { clientSessionOf, type Caller } from '../platform/request-context.ts';
import { header } from '../rest/http.ts';

// CORS for /graphql only (docs/partner-guide.md "Calling from a browser", docs/adr/0027-cors-for-client-sessions.md):
// - a preflight from an origin on any reseller's list (the union) is answered: the preflight carries
//   no credential, so it cannot know whose list to check;
// - an actual request gets `Access-Control-Allow-Origin` only when its caller is a client session of
//   a reseller that lists the origin; an API key's requests never do (a key belongs on servers);
// - an error before the caller is known (401, 429) from a listed origin gets it too, so a frontend
//   can read "token expired".
// An origin on no list gets no Access-Control-* header at all. Never `*`, never credentials: the
// token travels in a header, not a cookie.

/**
 * How long a process answers from the lists it read: a removal takes effect within this time on
 * every process (the project's rule is "within 1 s"), at one SELECT per interval while browsers call.
 */
export const CORS_ORIGINS_CACHE_MS = 500;

/** What a browser may send besides the CORS-safelisted headers: the token, the JSON type, retries, SSE's resume and yoga's preflight header. */
const ALLOW_HEADERS = 'authorization, content-type, idempotency-key, last-event-id, graphql-require-preflight, accept';
/** What a frontend may read of an answer besides the safelisted headers: the limits, the request id. */
const EXPOSE_HEADERS = 'Request-Id, RateLimit, RateLimit-Policy, Retry-After';
const MAX_AGE_SECONDS = '600';

export interface CorsPolicy {
  /** Answers a preflight (OPTIONS with Origin and Access-Control-Request-Method) from a listed origin; false when it is not one (nothing written). */
  preflight(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Before authentication: the request's origin when it is on some reseller's list, else undefined. */
  listedOrigin(req: IncomingMessage): Promise<string | undefined>;
  /** Sets the actual request's CORS headers on `res`: for a listed origin and a caller it may answer (see above). */
  allow(res: ServerResponse, origin: string | undefined, caller: Caller | undefined): void;
}

export function createCorsPolicy(em: EntityManager): CorsPolicy {
  // Per server, not per module: each process (and each server a test builds) reads the lists itself.
  let listed = new Map<string, ReadonlySet<string>>();
  let until = 0;
  let loading: Promise<void> | undefined;

  const resellersListing = async (origin: string): Promise<ReadonlySet<string> | undefined> => {
    // Process time: the bound is real time, whatever clock the domain runs on.
    if (performance.now() >= until) {
      loading ??= listedCorsOrigins(em)
        .then((next) => {
          listed = next;
          until = performance.now() + CORS_ORIGINS_CACHE_MS;
        })
        .finally(() => {
          loading = undefined;
        });
      await loading;
    }
    return listed.get(origin);
  };

  // Read once per request and kept on it: the policy's answers for one request must agree.
  const origins = new WeakMap<IncomingMessage, Promise<string | undefined>>();
  const listedOrigin = (req: IncomingMessage): Promise<string | undefined> => {
    let answer = origins.get(req);
    if (!answer) {
      const origin = header(req, 'origin');
      answer = origin === undefined ? Promise.resolve(undefined) : resellersListing(origin).then((r) => (r ? origin : undefined));
      origins.set(req, answer);
    }
    return answer;
  };

  return {
    async preflight(req, res) {
      if (req.method !== 'OPTIONS' || header(req, 'access-control-request-method') === undefined) return false;
      const origin = await listedOrigin(req);
      if (origin === undefined) return false;
      res.writeHead(204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': ALLOW_HEADERS,
        'Access-Control-Max-Age': MAX_AGE_SECONDS,
        Vary: 'Origin',
        'Content-Length': '0',
      });
      res.end();
      return true;
    },

    listedOrigin,

    allow(res, origin, caller) {
      if (origin === undefined) return;
      if (caller !== undefined) {
        // Answered from the same read as listedOrigin's, so both agree for the request.
        const resellers = listed.get(origin);
        if (!clientSessionOf({ caller }) || caller.kind !== 'reseller' || !resellers?.has(caller.resellerId)) return;
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      res.setHeader('Vary', 'Origin');
    },
  };
}
