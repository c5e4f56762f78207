import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import { authenticateRequest, type KeyKind, type TokenOptions } from './auth.ts';
import { sha256Hex } from './crypto.ts';
import { DomainError } from './errors.ts';
import { checkIdempotencyKey, runIdempotent, UnstoredResponse, type IdempotentResult, type StoredResponse } from './idempotency.ts';
import type { Logger } from './logger.ts';
import { originOf, type Caller, type Ctx, type KeyCaller } from './request-context.ts';
import type { RateLimits } from './rate-limits.ts';
import { inTransaction, retryingConflicts, type TxCtx } from '../db/engine/index.ts';
import { databaseHealth, unavailable } from './unavailable.ts';
import type { CatalogueCache } from './catalogue-cache.ts';

// The one request pipeline, for REST and GraphQL alike:
//   authenticate → read and check input → idempotency → transaction → use case → present.
// The edges (src/rest/router.ts, src/graphql/http.ts) read and check their input and present the
// result; everything between runs here, so a new caller (lookup token, client session, hosted
// page, worker) plugs in once, never into a surface.

export interface PipelineDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  log: Logger;
  limits: RateLimits;
  /** Catalogue rows kept by this process, handed to every request's context. */
  catalogue?: CatalogueCache;
}

/** What authentication counts against the client's address (docs/operator-guide.md "Rate limits"): a key or token that is not one. */
const FAILED_AUTHENTICATION = new Set(['invalid_api_key', 'invalid_lookup_token', 'invalid_client_session']);

/**
 * The bucket a caller's requests count in: its API key's, its lookup token's, or its client-session
 * token's, by the session id (docs/operator-guide.md "Rate limits"), so one frontend cannot use up its reseller's.
 */
const bucketOf = (caller: KeyCaller): string =>
  caller.kind === 'provider'
    ? `pk:${caller.providerKeyId}`
    : caller.clientSession
      ? caller.clientSession.sessionId
      : caller.lookup && caller.apiKeyId === null
        ? `lkpt:${caller.lookup.lookupId}`
        : `sk:${caller.apiKeyId}`;

export interface AuthenticateOptions extends TokenOptions {
  /** The client's address (src/platform/client-address.ts): failed authentication is limited by it. */
  address?: string;
  /** A route with a limit of its own besides the key's: `redeem` (per provider key). */
  limit?: 'redeem';
}

export interface RequestHeaders {
  authorization?: string;
  lookupToken?: string;
  idempotencyKey?: string;
}

export interface Pipeline {
  /** Bodies above it are refused with 413 before anything else reads them. */
  readonly bodyLimit: number;
  /** TRUST_PROXY: the proxies whose X-Forwarded-For entries name the client (src/platform/client-address.ts). */
  readonly trustProxy: number;
  /** Counts a failed authentication that is not an API key's (a hosted page's unknown secret) against the address. */
  failedAuthentication(address: string): Promise<void>;
  /** 429 when the address is over its failed-authentication limit. */
  checkAddress(address: string): Promise<void>;
  /**
   * Stage 1: who is calling, with a key of the kind this surface takes (`accepts`): the reseller
   * API and GraphQL take reseller keys, the provider API provider keys (401/403 as DomainErrors).
   * A Service-Lookup-Token is read only where the operation takes one (`takesLookupToken`; docs/partner-guide.md
   * "Lookup"), else it is 403 before anything runs; GraphQL takes it here and a plugin holds the
   * operation's fields to it (src/graphql/plugins/lookup-token-scope.ts).
   */
  authenticate(headers: RequestHeaders, accepts: KeyKind, options?: AuthenticateOptions): Promise<Caller>;
  /** The use-case context of one request; the Idempotency-Key is checked here (400 when malformed). */
  context(caller: Caller, request: { requestId: string; log: Logger; idempotencyKey?: string; host?: string }): Ctx;
  /**
   * Stages 3–5 for a writing use case: with a key, the idempotency record and the effects share
   * one transaction; without one, the use case still runs in a transaction. Domain errors become
   * `errorResponse` (stored with the record); an UnstoredResponse is answered and rolled back.
   */
  write(
    ctx: Ctx,
    fingerprint: () => string,
    run: (tx: TxCtx) => Promise<StoredResponse>,
    errorResponse: (err: DomainError) => StoredResponse,
  ): Promise<IdempotentResult>;
  /**
   * The 503 `service_unavailable` (with Retry-After) for a failure that is the database unreachable,
   * noted in the process's one database health tracker (src/platform/unavailable.ts), which logs it
   * once; undefined for any other failure.
   */
  unavailable(err: unknown): DomainError | undefined;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  // Authentication reads only through plain SQL (no identity map, no transaction), so one entity
  // manager serves every request's key lookup; a fork per request cost more than the cached lookup.
  const authEm = deps.orm.em.fork();
  const health = databaseHealth(deps.orm, deps.log);
  return {
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    trustProxy: deps.config.TRUST_PROXY,
    failedAuthentication: (address) => deps.limits.take('failed_auth', address),
    checkAddress: (address) => deps.limits.checkAddress(address),
    async authenticate(headers, accepts, options = {}) {
      const { address, limit } = options;
      // An address over its failed-authentication limit is refused before its key is read, valid or not.
      if (address !== undefined) await deps.limits.checkAddress(address);
      let caller: KeyCaller;
      try {
        caller = await authenticateRequest(
          authEm,
          deps.clock,
          { authorization: headers.authorization, lookupToken: headers.lookupToken },
          accepts,
          options,
        );
      } catch (err) {
        if (address !== undefined && err instanceof DomainError && FAILED_AUTHENTICATION.has(err.code))
          await deps.limits.take('failed_auth', address);
        throw err;
      }
      await deps.limits.take('key', bucketOf(caller), caller.kind === 'reseller' ? caller.rateLimit : undefined);
      if (limit === 'redeem' && caller.kind === 'provider') await deps.limits.take('redeem', caller.providerKeyId);
      return caller;
    },

    context: (caller, request) => ({
      em: deps.orm.em.fork(),
      caller,
      clock: deps.clock,
      config: deps.config,
      log: request.log,
      requestId: request.requestId,
      idempotencyKey: checkIdempotencyKey(request.idempotencyKey),
      origin: originOf(deps.config, request.host),
      catalogue: deps.catalogue,
    }),

    write(ctx, fingerprint, run, errorResponse) {
      // Each attempt on a fresh entity manager: nothing of a rolled-back attempt is kept. The
      // whole transaction is gone, its idempotency record included, so it runs again from the start.
      return retryingConflicts(
        (n) => writeOnce(n === 1 ? ctx : { ...ctx, em: deps.orm.em.fork() }, fingerprint, run, errorResponse),
        (err, n) =>
          ctx.log.warn(
            { sqlstate: (err as { code: string }).code, attempt: n },
            'transaction aborted by PostgreSQL to break a deadlock or conflict; running it again',
          ),
      );
    },

    unavailable: (err) => (health.failed(err) ? unavailable() : undefined),
  };
}

async function writeOnce(
  ctx: Ctx,
  fingerprint: () => string,
  run: (tx: TxCtx) => Promise<StoredResponse>,
  errorResponse: (err: DomainError) => StoredResponse,
): Promise<IdempotentResult> {
  if (ctx.idempotencyKey !== undefined && ctx.caller.kind === 'reseller') {
    // Keys are per reseller; a lookup token's requests are told apart from its reseller's own (docs/partner-guide.md
    // "Lookup"), so a key one used answers the other 409 idempotency_key_reused, never the stored response.
    // A client-session token's likewise (docs/partner-guide.md "Client sessions").
    const { lookup, clientSession } = ctx.caller;
    const fp = clientSession
      ? sha256Hex(`${fingerprint()}\nclient_session ${clientSession.sessionId}`)
      : lookup
        ? sha256Hex(`${fingerprint()}\nlookup ${lookup.lookupId}`)
        : fingerprint();
    return runIdempotent(ctx, { resellerId: ctx.caller.resellerId, key: ctx.idempotencyKey, fingerprint: fp }, run, errorResponse);
  }
  try {
    return { ...(await inTransaction(ctx, run)), replayed: false };
  } catch (err) {
    if (err instanceof UnstoredResponse) return { ...err.response, replayed: false };
    if (err instanceof DomainError) return { ...errorResponse(err), replayed: false };
    throw err;
  }
}
