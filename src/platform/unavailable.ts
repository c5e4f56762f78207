import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedRead } from '../db/engine/index.ts';
import { DomainError } from './errors.ts';
import type { Logger } from './logger.ts';

// The database unreachable (decisions §3, §12): every surface answers 503 `service_unavailable`
// with Retry-After, never 500; the log says once that it went down and once that it is back.

/** What a 503 asks the caller to wait, in seconds: about one probe of the database and a new connection. */
export const RETRY_AFTER_SECONDS = 2;

/** How often a database known to be down is tried, to tell it is back without waiting for traffic. */
const PROBE_MS = 1000;

/** Socket failures of the connection to PostgreSQL (node's codes; also on an AggregateError of several addresses). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** pg's own messages for a connection lost, never made, or not had from the pool in time (connectionTimeoutMillis). */
const LOST =
  /^(Connection terminated unexpectedly|Connection terminated due to connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/;

/**
 * Whether `err` says the database cannot be reached: a socket failure, the connection lost or not
 * had in time, a backend terminated by an administrator or a crash (SQLSTATE 57P01-57P03), or a
 * connection exception (class 08). MikroORM and GraphQL wrap errors: their causes are looked at too.
 */
export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 5) return false;
  const { code, message, cause, previous, originalError, errors } = err as Record<string, unknown>;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || /^(57P0[123]|08...)$/.test(code))) return true;
  if (typeof message === 'string' && LOST.test(message)) return true;
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnreachable(e, depth + 1))) return true;
  return [cause, previous, originalError].some((e) => e !== err && isDatabaseUnreachable(e, depth + 1));
}

/** The catalogue error a caller gets for `err` when the database is unreachable. */
export function unavailableOf(err: unknown): DomainError | undefined {
  return isDatabaseUnreachable(err) ? unavailable() : undefined;
}

export function unavailable(): DomainError {
  return new DomainError(
    'service_unavailable',
    'The database is unreachable; retry with the same Idempotency-Key after Retry-After seconds',
    { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
  );
}

/** Tells whether the database is down, from the failures the process meets, and logs its changes once. */
export interface DatabaseHealth {
  /** Notes a failure: true when it was the database unreachable (then nothing else needs logging it). */
  failed(err: unknown): boolean;
  readonly down: boolean;
}

const healthByOrm = new WeakMap<MikroORM, DatabaseHealth>();

/**
 * The one tracker of `orm`'s database, shared by the server and the background jobs of a process.
 * Down: one warning without a stack, then a `select 1` every PROBE_MS until one answers, and one
 * line when it does. The probe stops for good on any other failure (the ORM closed).
 */
export function databaseHealth(orm: MikroORM, log: Logger): DatabaseHealth {
  const known = healthByOrm.get(orm);
  if (known) return known;
  let down = false;
  let since = 0;
  const probe = () => {
    preparedRead(orm.em.fork(), 'select 1', []).then(
      () => {
        down = false;
        log.info({ down_ms: Date.now() - since }, 'database reachable again');
      },
      (err: unknown) => {
        if (isDatabaseUnreachable(err)) setTimeout(probe, PROBE_MS).unref();
      },
    );
  };
  const health: DatabaseHealth = {
    get down() {
      return down;
    },
    failed(err) {
      if (!isDatabaseUnreachable(err)) return false;
      if (!down) {
        down = true;
        since = Date.now();
        log.warn({ reason: reasonOf(err) }, 'database unreachable; answering 503 until it is back');
        setTimeout(probe, PROBE_MS).unref();
      }
      return true;
    },
  };
  healthByOrm.set(orm, health);
  return health;
}

/** The failure in one line (its code and message, no stack). */
function reasonOf(err: unknown): string {
  const { code, message } = err as { code?: unknown; message?: unknown };
  return [code, message].filter((part) => typeof part === 'string' && part !== '').join(': ') || String(err);
}
