import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import { authenticateRequest, type KeyKind } from './auth.ts';
import { sha256Hex } from './crypto.ts';
import { DomainError } from './errors.ts';
import { checkIdempotencyKey, runIdempotent, UnstoredResponse, type IdempotentResult, type StoredResponse } from './idempotency.ts';
import type { Logger } from './logger.ts';
import { originOf, type Caller, type Ctx } from './request-context.ts';
import { inTransaction, retryingConflicts, type TxCtx } from './transaction.ts';
import { databaseHealth, unavailable } from './unavailable.ts';

// The one request pipeline, for REST and GraphQL alike:
//   authenticate → read and check input → idempotency → transaction → use case → present.
// The edges (src/rest/router.ts, src/graphql/http.ts) read and check their input and present the
// result; everything between runs here, so a new caller (lookup token, client session, hosted
// page, worker) plugs in once, never into a surface.

export interface PipelineDeps { orm: MikroORM; config: Config; clock: Clock; log: Logger }

export interface RequestHeaders { authorization?: string; lookupToken?: string; idempotencyKey?: string }

export interface Pipeline {
  /** Bodies above it are refused with 413 before anything else reads them. */
  readonly bodyLimit: number;
  /**
   * Stage 1: who is calling, with a key of the kind this surface takes (`accepts`): the reseller
   * API and GraphQL take reseller keys, the provider API provider keys (401/403 as DomainErrors).
   * A Service-Lookup-Token is read only where the operation takes one (`takesLookupToken`; README
   * "Lookup"), else it is 403 before anything runs; GraphQL takes it here and the plugin holds the
   * operation's fields to it (src/graphql/pipeline-plugin.ts).
   */
  authenticate(headers: RequestHeaders, accepts: KeyKind, options?: { takesLookupToken?: boolean }): Promise<Caller>;
  /** The use-case context of one request; the Idempotency-Key is checked here (400 when malformed). */
  context(caller: Caller, request: { requestId: string; log: Logger; idempotencyKey?: string; host?: string }): Ctx;
  /**
   * Stages 3–5 for a writing use case: with a key, the idempotency record and the effects share
   * one transaction; without one, the use case still runs in a transaction. Domain errors become
   * `errorResponse` (stored with the record); an UnstoredResponse is answered and rolled back.
   */
  write(ctx: Ctx, fingerprint: () => string, run: (tx: TxCtx) => Promise<StoredResponse>, errorResponse: (err: DomainError) => StoredResponse): Promise<IdempotentResult>;
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
    authenticate: (headers, accepts, options) => authenticateRequest(authEm, deps.clock,
      { authorization: headers.authorization, lookupToken: headers.lookupToken }, accepts, options),

    context: (caller, request) => ({
      em: deps.orm.em.fork(),
      caller,
      clock: deps.clock,
      config: deps.config,
      log: request.log,
      requestId: request.requestId,
      idempotencyKey: checkIdempotencyKey(request.idempotencyKey),
      origin: originOf(deps.config, request.host),
    }),

    write(ctx, fingerprint, run, errorResponse) {
      // Each attempt on a fresh entity manager: nothing of a rolled-back attempt is kept. The
      // whole transaction is gone, its idempotency record included, so it runs again from the start.
      return retryingConflicts(
        (n) => writeOnce(n === 1 ? ctx : { ...ctx, em: deps.orm.em.fork() }, fingerprint, run, errorResponse),
        (err, n) => ctx.log.warn({ sqlstate: (err as { code: string }).code, attempt: n }, 'transaction aborted by PostgreSQL to break a deadlock or conflict; running it again'),
      );
    },

    unavailable: (err) => (health.failed(err) ? unavailable() : undefined),
  };
}


async function writeOnce(ctx: Ctx, fingerprint: () => string, run: (tx: TxCtx) => Promise<StoredResponse>,
  errorResponse: (err: DomainError) => StoredResponse): Promise<IdempotentResult> {
  if (ctx.idempotencyKey !== undefined && ctx.caller.kind === 'reseller') {
    // Keys are per reseller; a lookup token's requests are told apart from its reseller's own (README
    // "Lookup"), so a key one used answers the other 409 idempotency_key_reused, never the stored response.
    const { lookup } = ctx.caller;
    const fp = lookup ? sha256Hex(`${fingerprint()}\nlookup ${lookup.lookupId}`) : fingerprint();
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
