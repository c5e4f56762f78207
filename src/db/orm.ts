import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { engineFromEnv } from '../config.ts';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../platform/logger.ts';
import { engineOptions, type EngineMode } from './engine/index.ts';
import { entities } from './entities.ts';
import { migrationsList } from './migrations/index.ts';

export type Orm = MikroORM;

/** The longest a statement waits for a connection (a new one made, or one of the pool freed). */
export const DB_CONNECT_TIMEOUT_MS = 5000;

/**
 * MikroORM's options for this schema. `engine` (DB_ENGINE): `tuned` adds the parts of
 * src/db/engine that reach into pg, Kysely and MikroORM, after checking that the installed
 * versions are the ones they were written against; `plain` uses the dependencies as published.
 */
export function ormOptions(
  databaseUrl: string,
  poolMax: number,
  log?: Logger,
  engine: EngineMode = engineFromEnv(),
  replicaUrls: readonly string[] = [],
): Options {
  const { driver, Client, pipeline } = engineOptions(engine);
  return {
    clientUrl: databaseUrl,
    // Read replicas (DATABASE_REPLICA_URLS), each with the primary's pool and driver options. Only
    // the reads src/db/engine marks lag-tolerant go to them (lagTolerant, src/db/engine/replicas.ts):
    // not MikroORM's default of every find outside a transaction, which would read a caller's own
    // write back from a replica that has not replayed it yet.
    replicas: replicaUrls.map((url, i) => ({ clientUrl: url, name: `replica-${i + 1}` })),
    preferReadReplicas: false,
    driver,
    entities,
    extensions: [Migrator],
    // No schema snapshot: migrations are hand-written, and the migrator would write .snapshot-<db>.json into the cwd.
    migrations: { migrationsList, transactional: true, allOrNothing: true, silent: true, snapshot: false },
    // Connections once opened stay open (pg closes idle ones above `min` after 10 s). A burst after
    // a quiet spell would otherwise wait for new backends to start and prepare their statements
    // again: stalls of a few hundred ms on a busy machine (docs/adr/0009-database-pool.md).
    pool: { min: poolMax, max: poolMax },
    // No JIT on our connections: a plan whose estimated cost passes jit_above_cost (the pass list's
    // jsonb expansion is estimated at 100 rows a call) was compiled anew at every execution, far longer
    // than the statement ran (docs/adr/0012-cheaper-request-edges-provider-tier-jit-off.md); every statement here is short.
    // A connection not made, or not had from the pool, within DB_CONNECT_TIMEOUT_MS fails the request
    // with 503 (src/platform/unavailable.ts) instead of holding it for as long as the database is away.
    driverOptions: {
      ...(Client ? { Client } : {}),
      ...(pipeline ? { pipeline } : {}),
      options: '-c jit=off',
      connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
    },
    // Keep dates as they are stored: `date` columns read back as 'YYYY-MM-DD' strings.
    forceUtcTimezone: true,
    debug: false,
    discovery: { warnWhenNoEntities: false },
    ...(log ? { logger: (message: string) => log.debug({ orm: message }) } : {}),
  };
}

export async function openOrm(
  databaseUrl: string,
  poolMax: number,
  log?: Logger,
  engine?: EngineMode,
  replicaUrls: readonly string[] = [],
): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, poolMax, log, engine, replicaUrls));
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}
