import { MikroORM, type Options } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ConfigError, engineFromEnv } from '../config.ts';
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
export function ormOptions(databaseUrl: string, poolMax: number, log?: Logger, engine: EngineMode = engineFromEnv()): Options {
  const { driver, Client, pipeline } = engineOptions(engine);
  return {
    clientUrl: databaseUrl,
    driver,
    entities,
    extensions: [Migrator],
    // No schema snapshot: migrations are hand-written, and the migrator would write .snapshot-<db>.json into the cwd.
    migrations: { migrationsList, transactional: true, allOrNothing: true, silent: true, snapshot: false },
    // Never create a database: MikroORM would create a missing one on connecting and again in the
    // migrator (which asks regardless of `ensureDatabase`, and creates only through the management
    // database, here none). A DATABASE_URL with a typo is refused instead (requireDatabase); only
    // the embedded development database is created, by src/db/embedded.ts.
    ensureDatabase: false,
    schemaGenerator: { managementDbName: '' },
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

export async function openOrm(databaseUrl: string, poolMax: number, log?: Logger, engine?: EngineMode): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, poolMax, log, engine));
}

/** DATABASE_URL names a database that does not exist on its server: reported as one line, exit 1. */
export class DatabaseMissing extends ConfigError {}

/**
 * The key of the start lock (pg_advisory_lock, session level; ASCII 'RGW1'): migrations, the
 * pending-migration check and any seeding run holding it, so instances starting at once take turns
 * (docs/architecture.md "Migrations"). Seen in pg_locks as locktype 'advisory', objid 1380407089.
 */
export const START_LOCK_KEY = 0x52475731;

/**
 * A connection of its own (not one of the pool's) to `databaseUrl`; a database that does not exist
 * is DatabaseMissing, naming the database and its server but never the password.
 */
async function connectAlone(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    if ((err as { code?: string }).code !== '3D000') throw err; // invalid_catalog_name
    const url = new URL(databaseUrl);
    const name = decodeURIComponent(url.pathname.slice(1));
    throw new DatabaseMissing(
      `database "${name}" does not exist on ${url.hostname}:${url.port || '5432'}; create it or correct DATABASE_URL`,
    );
  }
}

/** Refuses a database that does not exist (DatabaseMissing) before anything opens a pool on it. */
export async function requireDatabase(databaseUrl: string): Promise<void> {
  await (await connectAlone(databaseUrl)).end();
}

/**
 * Runs `run` holding the start lock. A session-level lock must stay on one connection from lock to
 * unlock, and the pool hands each statement any of its connections: so the lock is held on a
 * connection of its own, closed afterwards (and released by PostgreSQL if this process dies).
 */
export async function withStartLock<T>(orm: Orm, run: () => Promise<T>, log?: Logger): Promise<T> {
  const client = await connectAlone(orm.config.get('clientUrl')!);
  try {
    const [{ locked }] = (await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [START_LOCK_KEY])).rows;
    if (!locked) {
      log?.info({ lock: START_LOCK_KEY }, 'another instance is migrating or seeding; waiting for it');
      await client.query('select pg_advisory_lock($1)', [START_LOCK_KEY]);
    }
    return await run();
  } finally {
    // Ending the session releases its advisory locks; a connection already broken has lost them.
    await client.end().catch(() => undefined);
  }
}

/** Applies every pending migration under the start lock; returns the names applied (none: up to date). */
export async function migrate(orm: Orm, log?: Logger): Promise<string[]> {
  return withStartLock(orm, () => applyPending(orm), log);
}

/** Applies every pending migration; the caller holds the start lock (withStartLock). */
export async function applyPending(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

/** The names of the migrations not yet applied; the caller holds the start lock (the migrator may create its table). */
export async function pendingMigrations(orm: Orm): Promise<string[]> {
  return (await orm.migrator.getPending()).map((m) => m.name);
}
