import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../platform/logger.ts';
import { PreparingClient } from '../platform/prepared-read.ts';
import { entities } from './entities.ts';
import { migrationsList } from './migrations/index.ts';

export type Orm = MikroORM;

export function ormOptions(databaseUrl: string, poolMax: number, log?: Logger): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    // No schema snapshot: migrations are hand-written, and the migrator would write .snapshot-<db>.json into the cwd.
    migrations: { migrationsList, transactional: true, allOrNothing: true, silent: true, snapshot: false },
    // Connections once opened stay open (pg closes idle ones above `min` after 10 s). A burst after
    // a quiet spell would otherwise wait for new backends to start and prepare their statements
    // again: stalls of a few hundred ms on a busy machine (bench/README.md "Async context frames").
    pool: { min: poolMax, max: poolMax },
    // Its clients run the texts preparedRead registers as named statements (src/platform/prepared-read.ts).
    driverOptions: { Client: PreparingClient },
    // Keep dates as they are stored: `date` columns read back as 'YYYY-MM-DD' strings.
    forceUtcTimezone: true,
    debug: false,
    discovery: { warnWhenNoEntities: false },
    ...(log ? { logger: (message: string) => log.debug({ orm: message }) } : {}),
  };
}

export async function openOrm(databaseUrl: string, poolMax: number, log?: Logger): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, poolMax, log));
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}
