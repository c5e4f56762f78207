import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { sweepIdempotencyRecords } from './idempotency.ts';
import { startOutboxDispatcher, type OutboxHandler } from './outbox.ts';

// The work that runs beside requests, never inside one: outbox delivery and the idempotency
// expiry sweep. `serve` runs it once per instance (OUTBOX_IN_PROCESS=true), `worker` runs it alone.

export interface BackgroundJobs { stop(): Promise<void> }

export function startBackgroundJobs(orm: MikroORM, deps: {
  config: Config;
  clock: Clock;
  log: Logger;
  handlers?: Record<string, OutboxHandler>;
}): BackgroundJobs {
  const { config, clock, log } = deps;
  const dispatcher = startOutboxDispatcher(orm, deps.handlers ?? {}, { clock, log, pollMs: config.OUTBOX_POLL_MS });
  const sweeper = every(config.IDEMPOTENCY_SWEEP_MS, async () => {
    const removed = await sweepIdempotencyRecords(orm.em.fork(), clock, config);
    if (removed) log.debug({ removed }, 'expired idempotency records swept');
  }, (err) => log.error({ err }, 'idempotency sweep failed'));
  return {
    async stop() {
      await Promise.all([dispatcher.stop(), sweeper.stop()]);
    },
  };
}

/** Runs `job` every `ms` after the previous run ended (never two at once); stop() waits for a running one. */
function every(ms: number, job: () => Promise<void>, onError: (err: unknown) => void) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = job().catch(onError).finally(() => { if (!stopped) timer = setTimeout(tick, ms); });
  };
  timer = setTimeout(tick, ms);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
