import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import { DomainError, validationError } from './errors.ts';
import type { Ctx } from './request-context.ts';
import { masterKey, secretBox, type SecretBox } from './secrets.ts';
import { inSavepoint, inTransaction, type TxCtx } from './transaction.ts';

// docs/errors.md "Idempotency" and README "Request pipeline". The record is written in the same transaction as
// the effects: INSERT … ON CONFLICT DO NOTHING waits on a concurrent uncommitted insert of the
// same (reseller, key), which is how a second request waits for the first, across processes.

export interface StoredResponse { status: number; body: unknown }
export interface IdempotentResult extends StoredResponse { replayed: boolean }

/** A response the caller gets but that must not be stored (the transaction is rolled back). */
export class UnstoredResponse extends Error {
  readonly response: StoredResponse;
  constructor(response: StoredResponse) { super("response not stored"); this.response = response; }
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

/**
 * Runs `execute` at most once per (reseller, key) within the retention window, in one transaction
 * with the record. `execute` gets the transaction's context; a DomainError it throws is answered
 * with its 4xx and stored, and its effects are rolled back to a savepoint. Any other error rolls
 * back everything, the record included, so a retry after a 5xx executes again.
 */
export async function runIdempotent(
  ctx: Ctx,
  scope: { resellerId: string; key: string; fingerprint: string },
  execute: (tx: TxCtx) => Promise<StoredResponse>,
  errorResponse: (err: DomainError) => StoredResponse,
  options: { answersDomainErrors?: boolean } = {},
): Promise<IdempotentResult> {
  const { clock, config } = ctx;
  const box = await responseBox(ctx);
  const now = clock.now();
  const expiredBefore = new Date(now.getTime() - config.IDEMPOTENCY_TTL_SECONDS * 1000);
  try {
    return await inTransaction({ ...ctx, em: ctx.em.fork() }, async (tx) => {
      const { em } = tx;
      // First writer, or a record past retention (treated as absent and taken over in the same
      // statement; the background sweep deletes the rest). A live record returns no row. The wait
      // for a concurrent first request is bounded by lock_timeout, set for this transaction by the
      // same statement (set_config in the SELECT runs before the INSERT meets the conflict).
      const inserted = await em.execute<{ key: string }[]>(
        `insert into idempotency_record (reseller_id, key, fingerprint, created_at)
         select ?, ?, ?, ? from (select set_config('lock_timeout', ?, true)) as bound
         on conflict (reseller_id, key) do update
           set fingerprint = excluded.fingerprint, created_at = excluded.created_at, status_code = null, response_body = null
           where idempotency_record.created_at < ?
         returning key`,
        [scope.resellerId, scope.key, scope.fingerprint, now, String(Math.floor(config.IDEMPOTENCY_WAIT_MS)), expiredBefore],
      );
      if (inserted.length === 0) {
        const [stored] = await em.execute<{ fingerprint: string; status_code: number | null; response_text: string | null }[]>(
          `select fingerprint, status_code, response_body #>> '{}' as response_text from idempotency_record where reseller_id = ? and key = ?`,
          [scope.resellerId, scope.key],
        );
        if (!stored || stored.status_code === null) throw new DomainError('idempotency_request_in_progress');
        if (stored.fingerprint !== scope.fingerprint) {
          throw new DomainError('idempotency_key_reused',
            'This Idempotency-Key was already used with a different request; use a new key');
        }
        return { status: stored.status_code, body: JSON.parse(box.open(stored.response_text ?? 'null')), replayed: true };
      }
      let response: StoredResponse;
      try {
        // A 4xx keeps the record but none of the use case's effects: roll back to a savepoint. A use
        // case that answers its domain errors itself (GraphQL fields, each in its own savepoint) needs none.
        response = options.answersDomainErrors ? await execute(tx) : await inSavepoint(tx, execute);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        response = errorResponse(err);
      }
      // The body is kept as its exact JSON text (a jsonb string): a jsonb object would reorder its keys,
      // and a replay must return the very same bytes. It is sealed: a response may show a secret once
      // (an access code, a hosted session's URL), and the table must not keep it readable.
      await em.execute(
        'update idempotency_record set status_code = ?, response_body = to_jsonb(?::text) where reseller_id = ? and key = ?',
        [response.status, box.seal(JSON.stringify(response.body)), scope.resellerId, scope.key],
      );
      return { ...response, replayed: false };
    });
  } catch (err) {
    if (err instanceof UnstoredResponse) return { ...err.response, replayed: false };
    // lock_timeout fired while waiting for the first request with this key.
    if ((err as { code?: string }).code === '55P03') throw new DomainError('idempotency_request_in_progress');
    throw err;
  }
}

const boxes = new WeakMap<Buffer, SecretBox>();

/** The box stored responses are sealed in (README "Secrets at rest"). */
async function responseBox(ctx: Pick<Ctx, 'em' | 'config'>): Promise<SecretBox> {
  const master = await masterKey(ctx.em, ctx.config);
  let box = boxes.get(master);
  if (!box) boxes.set(master, box = secretBox(master, 'idempotency responses'));
  return box;
}

/** Removes records past retention: the background jobs call it on an interval, never a request. */
export async function sweepIdempotencyRecords(em: EntityManager, clock: Clock, config: Config): Promise<number> {
  const before = new Date(clock.now().getTime() - config.IDEMPOTENCY_TTL_SECONDS * 1000);
  const res = await em.execute<{ affectedRows: number }>('delete from idempotency_record where created_at < ?', [before], 'run');
  return res.affectedRows ?? 0;
}
