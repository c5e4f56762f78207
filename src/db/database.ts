import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../platform/logger.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import { removeInstanceFile, runningInstance, writeInstanceFile } from './instance.ts';
import { openOrm, requireDatabase, type Orm } from './orm.ts';
import { checkEngineVersions } from './engine/index.ts';

export interface Database {
  orm: Orm;
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * DATABASE_URL when set (it must exist: DatabaseMissing otherwise); otherwise the embedded PostgreSQL under DATA_DIR. `serve` (role 'instance')
 * starts it and leaves its URL in DATA_DIR; operator commands ('client') use a running instance's
 * database when there is one, and start their own otherwise.
 */
export async function openDatabase(config: Config, log: Logger, role: 'instance' | 'client' = 'client'): Promise<Database> {
  // Before anything starts: a tuned engine on versions it was not written against stops here.
  if (config.DB_ENGINE === 'tuned') checkEngineVersions();
  if (config.DATABASE_URL) {
    // Never created: a typo in DATABASE_URL stops here with one line (docs/operator-guide.md "Release step").
    await requireDatabase(config.DATABASE_URL);
    const orm = await openOrm(config.DATABASE_URL, config.DB_POOL_MAX, log, config.DB_ENGINE);
    return { orm, url: config.DATABASE_URL, embedded: false, close: () => orm.close() };
  }
  const dataDir = path.resolve(config.dataDir);
  const running = role === 'client' ? runningInstance(dataDir) : undefined;
  if (running) {
    log.debug({ pid: running.pid }, 'using the database of the running instance');
    const orm = await openOrm(running.url, config.DB_POOL_MAX, log, config.DB_ENGINE);
    return { orm, url: running.url, embedded: true, close: () => orm.close() };
  }
  const pg = await startEmbeddedPostgres({ dataDir, log });
  try {
    const orm = await openOrm(pg.url, config.DB_POOL_MAX, log, config.DB_ENGINE);
    if (role === 'instance') writeInstanceFile(dataDir, pg.url);
    return {
      orm,
      url: pg.url,
      embedded: true,
      async close() {
        if (role === 'instance') removeInstanceFile(dataDir);
        await orm.close();
        await pg.stop();
      },
    };
  } catch (err) {
    await pg.stop();
    throw err;
  }
}
