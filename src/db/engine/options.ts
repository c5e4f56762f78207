import { PostgreSqlDriver, type Options } from '@mikro-orm/postgresql';
import { QueueSendingDriver } from './driver.ts';
import type { EngineMode } from './mode.ts';
import { buildRowsOnPlainObjects } from './pg-result.ts';
import { PreparingClient } from './prepared-read.ts';
import { checkEngineVersions } from './versions.ts';

/**
 * The part of MikroORM's options that picks the engine (README.md in this folder). `tuned`: after
 * checking the installed versions, pg's rows built on plain objects (pg-result.ts), MikroORM's
 * statements sending a transaction's queued writes first (driver.ts), and a pg client that runs
 * registered texts as named statements and folds a transaction's edges into its statements
 * (prepared-read.ts, edges-along.ts). `plain`: MikroORM's driver and pg's client as published.
 */
export function engineOptions(mode: EngineMode): Pick<Options, 'driver'> & { Client?: typeof PreparingClient } {
  if (mode === 'plain') return { driver: PostgreSqlDriver };
  checkEngineVersions();
  buildRowsOnPlainObjects();
  return { driver: QueueSendingDriver, Client: PreparingClient };
}
