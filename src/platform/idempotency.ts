import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import { DomainError, validationError } from './errors.ts';
import type { Ctx } from './request-context.ts';
import { masterKey, secretBox, type SecretBox } from './secrets.ts';
import { inTransaction, type TxCtx } from '../db/engine/index.ts';
import { autocommitWrite, lastWriteWithCommit, preparedRead } from '../db/engine/index.ts';

// docs/errors.md "Idempotency" and docs/architecture.md "Request pipeline". The record is written in the same transaction as
// the effects, after them, in the statement sent with COMMIT: the
// INSERT … ON CONFLICT waits on a concurrent uncommitted record of the same (reseller, key), which
// is how a second request waits for the first, across processes.

export interface StoredResponse {
  status: number;
  body: unknown;
}
export interface IdempotentResult extends StoredResponse {
  replayed: boolean;
}

/** A response the caller gets but that must not be stored (the transaction is rolled back). */
export class UnstoredResponse extends Error {
  readonly response: StoredResponse;
  constructor(response: StoredResponse) {
    super('response not stored');
    this.response = response;
  }
}

const KEY = /^[\x20-\x7E]{1,255}$/;

export function checkIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (!KEY.test(key)) throw validationError('Idempotency-Key', 'Idempotency-Key must be 1–255 printable ASCII characters');
  return key;
}

/** Canonical JSON (sorted keys) so the same body always has the same fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprint(...parts: unknown[]): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('hex');
}

/** The use case failed; its transaction is rolled back and what it threw is answered (or stored) after. */
class UseCaseFailed extends Error {
  readonly failure: unknown;
  constructor(failure: unknown) {
    super('use case failed');
    this.failure = failure;
  }
}

type Scope = { resellerId: string; key: string; fingerprint: string };

/**
 * Runs `execute` at most once per (reseller, key) within the retention window, in one transaction
 * with the record. The key is taken last, by the statement that stores the response, just before
 * COMMIT (docs/architecture.md "Request pipeline"): a first request costs one statement for its key, not three (no
 * claim ahead, no savepoint, no separate store). A concurrent request with the same key runs its use
 * case in its own transaction too, then waits on that statement for the first to commit; its effects
 * are rolled back and it answers the first's record, so the effects still happen once. A DomainError
 * rolls back the use case and its 4xx is stored in a transaction of its own (unless a concurrent
 * request stored first: that one is answered). Any other error rolls back everything, so a retry
 * after a 5xx executes again, unless a request with this key committed meanwhile (a unique index it
 * met, say): then that one is answered.
 */
export async function runIdempotent(
  ctx: Ctx,
  scope: Scope,
  execute: (tx: TxCtx) => Promise<StoredResponse>,
  errorResponse: (err: DomainError) => StoredResponse,
): Promise<IdempotentResult> {
  const box = await responseBox(ctx);
  try {
    return await inTransaction(ctx, async (tx) => {
      let response: StoredResponse;
      try {
        response = await execute(tx);
      } catch (err) {
        throw err instanceof UnstoredResponse ? err : new UseCaseFailed(err);
      }
      await storeUnderKey(tx.em, ctx, scope, box, response);
      return { ...response, replayed: false };
    });
  } catch (err) {
    if (err instanceof UnstoredResponse) return { ...err.response, replayed: false };
    // Another request took the key first: this one's effects are rolled back and the stored record answered.
    if (isKeyHeld(err)) return answerStored(ctx.em.fork(), scope, box);
    if (isLockTimeout(err)) throw new DomainError('idempotency_request_in_progress');
    const failure = err instanceof UseCaseFailed ? err.failure : err;
    if (failure instanceof DomainError) return storeDomainError(ctx, scope, box, errorResponse(failure));
    // An unexpected failure: answer a record a concurrent request with this key committed, else rethrow.
    const stored = await findStored(ctx.em.fork(), scope, box).catch((lookupFailed: unknown) => {
      if (lookupFailed instanceof DomainError) throw lookupFailed;
      return undefined; // the database is failing: the first error says more
    });
    if (stored) return stored;
    throw failure;
  }
}

/**
 * Stores the response under the key, taking it: the first writer, or a record past retention (taken
 * over in the same statement; the background sweep deletes the rest). The statement is the
 * transaction's last and goes with its COMMIT (lastWriteWithCommit), carrying the use case's queued
 * writes: a live record holding the key fails it, and so COMMIT, with `idempotency_key_held()`'s
 * unique violation (isKeyHeld). The wait for a concurrent uncommitted record is bounded by
 * lock_timeout, which the same statement sets before the INSERT meets the conflict (`bound`, read by
 * the INSERT) and puts back as it was once the row is stored (the outer SELECT reads the INSERT's
 * row): COMMIT, where a business-account ledger row takes the account's lock, waits for it as any
 * statement does. The body is kept as its exact JSON text (a jsonb string): a jsonb object would
 * reorder its keys, and a replay must return the very same bytes. It is sealed: a response may show
 * a secret once (an access code, a hosted session's URL), and the table must not keep it readable.
 */
async function storeUnderKey(em: EntityManager, ctx: Ctx, scope: Scope, box: SecretBox, response: StoredResponse): Promise<void> {
  const now = ctx.clock.now();
  const expiredBefore = new Date(now.getTime() - ctx.config.IDEMPOTENCY_TTL_SECONDS * 1000);
  await lastWriteWithCommit(
    em,
    `with bound as materialized (
       select current_setting('lock_timeout') as before, set_config('lock_timeout', ?, true) as waiting
     ), stored as (
       insert into idempotency_record (reseller_id, key, fingerprint, created_at, status_code, response_body)
       select ?, ?, ?, ?, ?, to_jsonb(?::text) from bound
       on conflict (reseller_id, key) do update
         set fingerprint = excluded.fingerprint, created_at = excluded.created_at,
             status_code = excluded.status_code, response_body = excluded.response_body
         where idempotency_record.created_at < ?
       returning key
     )
     select coalesce((select set_config('lock_timeout', bound.before, true) from stored), idempotency_key_held()) as lock_timeout from bound`,
    [
      String(Math.floor(ctx.config.IDEMPOTENCY_WAIT_MS)),
      scope.resellerId,
      scope.key,
      scope.fingerprint,
      now,
      response.status,
      box.seal(JSON.stringify(response.body)),
      expiredBefore,
    ],
  );
}

/** What `idempotency_key_held()` raises (its migration, Migration20261127030000_key_held_at_commit): a live record holds the key. */
function isKeyHeld(err: unknown): boolean {
  const { code, constraint } = (err ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'idempotency_record_pkey';
}

/** A use case's 4xx, stored under the key in a transaction of its own (its effects are gone). */
async function storeDomainError(ctx: Ctx, scope: Scope, box: SecretBox, response: StoredResponse): Promise<IdempotentResult> {
  try {
    await inTransaction(ctx, (tx) => storeUnderKey(tx.em, ctx, scope, box, response));
    return { ...response, replayed: false };
  } catch (err) {
    if (isKeyHeld(err)) return answerStored(ctx.em.fork(), scope, box);
    if (isLockTimeout(err)) throw new DomainError('idempotency_request_in_progress');
    throw err;
  }
}

/**
 * The record holding the key: its response again (`X-Idempotent-Replayed`), 409
 * idempotency_key_reused for another request, 409 in progress for a record without a response.
 * Undefined when no record holds the key.
 */
async function findStored(em: EntityManager, scope: Scope, box: SecretBox): Promise<IdempotentResult | undefined> {
  const [stored] = await preparedRead<{ fingerprint: string; status_code: number | null; response_text: string | null }>(
    em,
    `select fingerprint, status_code, response_body #>> '{}' as response_text from idempotency_record where reseller_id = ? and key = ?`,
    [scope.resellerId, scope.key],
  );
  if (!stored) return undefined;
  if (stored.status_code === null) throw new DomainError('idempotency_request_in_progress');
  if (stored.fingerprint !== scope.fingerprint) {
    throw new DomainError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key');
  }
  return { status: stored.status_code, body: JSON.parse(box.open(stored.response_text ?? 'null')), replayed: true };
}

/** The record that took the key first; gone already (swept), the client is told to retry. */
async function answerStored(em: EntityManager, scope: Scope, box: SecretBox): Promise<IdempotentResult> {
  const stored = await findStored(em, scope, box);
  if (!stored) throw new DomainError('idempotency_request_in_progress');
  return stored;
}

/** lock_timeout fired while waiting for the first request with this key. */
function isLockTimeout(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '55P03';
}

const boxes = new WeakMap<Buffer, SecretBox>();

/** The box stored responses are sealed in (docs/operator-guide.md "Secrets at rest"). */
async function responseBox(ctx: Pick<Ctx, 'em' | 'config'>): Promise<SecretBox> {
  const master = await masterKey(ctx.em, ctx.config);
  let box = boxes.get(master);
  if (!box) boxes.set(master, (box = secretBox(master, 'idempotency responses')));
  return box;
}

/** Removes records past retention: the background jobs call it on an interval, never a request. */
export async function sweepIdempotencyRecords(em: EntityManager, clock: Clock, config: Config): Promise<number> {
  const before = new Date(clock.now().getTime() - config.IDEMPOTENCY_TTL_SECONDS * 1000);
  // Counted in the statement: the engine's calls give rows, not a command's row count.
  const [swept] = await autocommitWrite<{ count: number }>(
    em,
    'with swept as (delete from idempotency_record where created_at < ? returning 1) select count(*)::int as count from swept',
    [before],
  );
  return swept.count;
}
