import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../platform/logger.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import { openOrm, type Orm } from './orm.ts';

export interface Database { orm: Orm; url: string; embedded: boolean; close(): Promise<void> }

/** DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.DATABASE_URL) {
    const orm = await openOrm(config.DATABASE_URL, config.DB_POOL_MAX, log);
    return { orm, url: config.DATABASE_URL, embedded: false, close: () => orm.close() };
  }
  const pg = await startEmbeddedPostgres({ dataDir: path.resolve(config.dataDir), log });
  const orm = await openOrm(pg.url, config.DB_POOL_MAX, log);
  return {
    orm,
    url: pg.url,
    embedded: true,
    async close() {
      await orm.close();
      await pg.stop();
    },
  };
}
