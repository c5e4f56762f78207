import type pg from 'pg';
import { PostgreSqlDriver, type Options } from '@mikro-orm/postgresql';
import { ConfigError } from '../../config.ts';
import { QueueSendingDriver } from './driver.ts';
import type { EngineMode } from './mode.ts';
import { PreparingClient, PreparingPipelineClient } from './prepared-read.ts';
import { checkEngineVersions } from './versions.ts';

/** The tuned engine's parts that DB_ENGINE_WITHOUT can leave out, to measure what each is worth (README.md in this folder). */
export const ENGINE_PARTS = ['edges-along'] as const;
export type EnginePart = (typeof ENGINE_PARTS)[number];

/** DB_ENGINE_WITHOUT: parts of the tuned engine left out, separated by commas; a name not in ENGINE_PARTS is refused. */
export function partsLeftOut(env: Record<string, string | undefined> = process.env): ReadonlySet<EnginePart> {
  const names = (env.DB_ENGINE_WITHOUT ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(ENGINE_PARTS as readonly string[]).includes(n));
  if (unknown.length) {
    throw new ConfigError(
      `invalid configuration:\n  DB_ENGINE_WITHOUT: ${unknown.join(', ')} is not a part of the engine (${ENGINE_PARTS.join(', ')})`,
    );
  }
  return new Set(names as EnginePart[]);
}

/**
 * The part of MikroORM's options that picks the engine (README.md in this folder). `tuned`: after
 * checking the installed versions, MikroORM's statements sending a transaction's queued writes
 * first (driver.ts), and a pg client that runs registered texts as named statements and folds a
 * transaction's edges into its statements (prepared-read.ts, edges-along.ts); `without` leaves
 * parts out (bench/engine-parts.ts). `plain`: MikroORM's driver and pg's client as published.
 */
export function engineOptions(
  mode: EngineMode,
  without: ReadonlySet<EnginePart> = partsLeftOut(),
): Pick<Options, 'driver'> & { Client?: typeof pg.Client; pipeline?: boolean } {
  if (mode === 'plain') return { driver: PostgreSqlDriver };
  checkEngineVersions();
  if (without.has('edges-along')) return { driver: QueueSendingDriver, Client: PreparingPipelineClient, pipeline: true };
  return { driver: QueueSendingDriver, Client: PreparingClient };
}
