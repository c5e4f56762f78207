import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller, Ctx } from '../../platform/request-context.ts';

// Read replicas (DATABASE_REPLICA_URLS; docs/operator-guide.md "Read replicas"). MikroORM opens
// them (its `replicas` option, src/db/orm.ts) and picks one for a read asked of its 'read'
// connection; this file only says which reads may ask. A read that tolerates lag (the catalogue,
// pass packages, availability) goes to a replica when it runs outside a transaction, its caller
// has not written in this process within the last READ_YOUR_WRITES_MS, and the replicas are not
// known to be down; everything else reads the primary. A read a replica cannot answer (unreachable,
// or cancelled by a conflict with its recovery) runs again on the primary.

/** Which of MikroORM's connections a statement goes to: the primary ('write') or a replica ('read'). */
export type ConnectionType = 'read' | 'write';

/**
 * How long after a caller's own write its lag-tolerant reads stay on the primary, so it reads what
 * it wrote while the replica catches up (streaming replication is well under a second behind on a
 * healthy link). Kept per process: behind a load balancer, a caller's next request reaches the
 * same instance only when the balancer keeps it there (docs/operator-guide.md "Read replicas").
 */
export const READ_YOUR_WRITES_MS = 2000;

/** How often replicas known to be down are tried again, with `select 1`, while reads go to the primary. */
const REPLICA_PROBE_MS = 1000;

/** When each caller (callerKey) last finished a write transaction in this process (performance.now()). */
const lastWriteAt = new Map<string, number>();

/** The caller a write is remembered for: a reseller (whichever of its keys or tokens), a provider; no one for anyone else. */
function callerKey(caller: Caller): string | undefined {
  if (caller.kind === 'reseller') return `reseller:${caller.resellerId}`;
  if (caller.kind === 'provider') return `provider:${caller.providerId}`;
  return undefined;
}

/** Notes that `caller` has just written (its top-level transaction ended: src/db/engine/transaction.ts). */
export function noteWrite(caller: Caller): void {
  const key = callerKey(caller);
  if (key === undefined) return;
  const now = performance.now();
  // Drop what no longer counts, so the map holds only the callers of the last two seconds.
  if (lastWriteAt.size > 10_000) for (const [k, at] of lastWriteAt) if (now - at >= READ_YOUR_WRITES_MS) lastWriteAt.delete(k);
  lastWriteAt.delete(key);
  lastWriteAt.set(key, now);
}

function wroteLately(caller: Caller): boolean {
  const key = callerKey(caller);
  const at = key === undefined ? undefined : lastWriteAt.get(key);
  return at !== undefined && performance.now() - at < READ_YOUR_WRITES_MS;
}

/** Whether the replicas of an ORM (by its driver) are known to be down, and the probe that tells when they are back. */
interface ReplicaHealth {
  down: boolean;
}
const healthByDriver = new WeakMap<object, ReplicaHealth>();

function healthOf(em: EntityManager): ReplicaHealth {
  const driver = em.getDriver();
  let health = healthByDriver.get(driver);
  if (!health) healthByDriver.set(driver, (health = { down: false }));
  return health;
}

/** Whether `em`'s ORM was given replicas (MikroORM's `replicas` option). */
const hasReplicas = (em: EntityManager): boolean => (em.config.get('replicas') ?? []).length > 0;

/**
 * Runs a read that tolerates lag: `read` gets the connection to send it to ('read': a replica,
 * chosen by MikroORM; 'write': the primary) and passes it on (`preparedRead`'s `connectionType`,
 * or MikroORM's find option of that name). On a replica it may answer a little behind the primary;
 * a failure of the replica itself runs it again on the primary, and replicas unreachable are
 * logged once and left alone until a probe finds them back.
 */
export async function lagTolerant<T>(
  ctx: Pick<Ctx, 'em' | 'caller' | 'log'>,
  read: (connectionType: ConnectionType) => Promise<T>,
): Promise<T> {
  const { em } = ctx;
  if (!hasReplicas(em) || em.isInTransaction() || wroteLately(ctx.caller)) return read('write');
  const health = healthOf(em);
  if (health.down) return read('write');
  try {
    return await read('read');
  } catch (err) {
    const unreachable = replicaUnreachable(err);
    if (!unreachable && !recoveryConflict(err)) throw err;
    if (unreachable && !health.down) {
      health.down = true;
      ctx.log.warn({ reason: messageOf(err) }, 'read replica unreachable; its reads go to the primary until it is back');
      probe(em.fork(), health, ctx.log);
    }
    return read('write');
  }
}

/** `select 1` on a replica every REPLICA_PROBE_MS until one answers (then one line), or until something else fails (the ORM closed). */
function probe(em: EntityManager, health: ReplicaHealth, log: Pick<Ctx['log'], 'info'>): void {
  const timer = setTimeout(() => {
    em.getConnection('read')
      .execute('select 1')
      .then(
        () => {
          health.down = false;
          log.info('read replica reachable again; lag-tolerant reads go to it');
        },
        (err: unknown) => {
          if (replicaUnreachable(err)) probe(em, health, log);
        },
      );
  }, REPLICA_PROBE_MS);
  // The probe alone does not keep a process alive.
  timer.unref();
}

/**
 * Whether `err` says the replica could not be reached: a socket failure, pg's messages for a
 * connection lost or not had in time, a backend shut down (SQLSTATE 57P01–57P03, as a stopping
 * standby answers), a connection exception (class 08), or a database that is still starting or in
 * recovery without hot standby (57P03). MikroORM wraps driver errors: their causes count too.
 */
function replicaUnreachable(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 5) return false;
  const { code, message, cause, previous, errors } = err as Record<string, unknown>;
  if (typeof code === 'string' && (/^E[A-Z]+$/.test(code) || /^(57P0[123]|08...)$/.test(code))) return true;
  if (
    typeof message === 'string' &&
    /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(message)
  )
    return true;
  if (Array.isArray(errors) && errors.some((e) => replicaUnreachable(e, depth + 1))) return true;
  return [cause, previous].some((e) => e !== err && replicaUnreachable(e, depth + 1));
}

/** A statement a hot standby cancelled to replay WAL (SQLSTATE 40001 from a replica): the primary answers it instead. */
function recoveryConflict(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 5) return false;
  const { code, cause, previous } = err as Record<string, unknown>;
  return code === '40001' || [cause, previous].some((e) => e !== err && recoveryConflict(e, depth + 1));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
