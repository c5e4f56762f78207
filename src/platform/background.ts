import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { sweepIdempotencyRecords } from './idempotency.ts';
import { startOutboxDispatcher, type OutboxHandler } from './outbox.ts';
import { reportOutbox } from './metrics.ts';
import { databaseHealth } from './unavailable.ts';

// The work that runs beside requests, never inside one: outbox delivery, the idempotency expiry
// sweep and the modules' sweeps (e.g. booking sessions). `serve` runs it once per instance
// (OUTBOX_IN_PROCESS=true), `worker` runs it alone.

export interface BackgroundJobs {
  stop(): Promise<void>;
}

/**
 * A module's periodic job; `run` returns how many things it changed (logged when not zero). A job
 * whose runs leave work going (webhook attempts) gives `stop`, awaited after its last run.
 */
export interface Sweep {
  name: string;
  everyMs: number;
  run(orm: MikroORM): Promise<number>;
  stop?(): Promise<void>;
}

export function startBackgroundJobs(
  orm: MikroORM,
  deps: {
    config: Config;
    clock: Clock;
    log: Logger;
    handlers?: Record<string, OutboxHandler>;
    sweeps?: Sweep[];
  },
): BackgroundJobs {
  const { config, clock, log } = deps;
  // The database unreachable is logged once, when it goes down (src/platform/unavailable.ts), not per run.
  const health = databaseHealth(orm, log);
  const failed = (err: unknown, message: string, context: object = {}) => {
    if (!health.failed(err)) log.error({ err, ...context }, message);
  };
  const dispatcher = startOutboxDispatcher(orm, deps.handlers ?? {}, {
    clock,
    log,
    pollMs: config.OUTBOX_POLL_MS,
    failed: (err) => failed(err, 'outbox dispatch failed'),
  });
  // The backlog is this process's to report while it delivers the outbox (docs/operator-guide.md "Metrics").
  const unreport = reportOutbox(orm);
  const sweeper = every(
    config.IDEMPOTENCY_SWEEP_MS,
    async () => {
      const removed = await sweepIdempotencyRecords(orm.em.fork(), clock, config);
      if (removed) log.debug({ removed }, 'expired idempotency records swept');
    },
    (err) => failed(err, 'idempotency sweep failed'),
  );
  const sweeps = (deps.sweeps ?? []).map((sweep) => {
    const timer = every(
      sweep.everyMs,
      async () => {
        const changed = await sweep.run(orm);
        if (changed) log.info({ sweep: sweep.name, changed }, 'sweep done');
      },
      (err) => failed(err, 'sweep failed', { sweep: sweep.name }),
    );
    return {
      stop: async () => {
        await timer.stop();
        await sweep.stop?.();
      },
    };
  });
  return {
    async stop() {
      unreport();
      await Promise.all([dispatcher.stop(), sweeper.stop(), ...sweeps.map((s) => s.stop())]);
    },
  };
}

/** Runs `job` every `ms` after the previous run ended (never two at once); stop() waits for a running one. */
function every(ms: number, job: () => Promise<void>, onError: (err: unknown) => void) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = job()
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, ms);
      });
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
