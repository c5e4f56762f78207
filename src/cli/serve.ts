import cluster, { type Worker } from 'node:cluster';
import type http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import type { Config } from '../config.ts';
import { openDatabase, type Database } from '../db/database.ts';
import { applyPending, openOrm, pendingMigrations, withStartLock } from '../db/orm.ts';
import { seedDemo, type DemoSeed } from '../db/seed.ts';
import { startBackgroundJobs, type BackgroundJobs, type Sweep } from '../platform/background.ts';
import type { OutboxHandler } from '../platform/outbox.ts';
import { expireBookingSessions } from '../modules/bookings/index.ts';
import { expireAccessCodes } from '../modules/access-codes/index.ts';
import { expireHostedSessions } from '../modules/hosted-sessions/index.ts';
import { expireIssuedPasses } from '../modules/passes/index.ts';
import { MAIL_TOPIC, mailHandler } from '../modules/mail/index.ts';
import { WEBHOOK_EVENT_TOPIC, webhookDeliveryLoop, webhookFanOut } from '../modules/webhooks/index.ts';
import { systemClock } from '../platform/clock.ts';
import { Draining, drainAndClose, IN_FLIGHT_LIMIT_MS } from '../platform/shutdown.ts';
import type { Logger } from '../platform/logger.ts';
import { describeEndpoints, describeSeed } from './banner.ts';
import { ReportedError } from './usage.ts';

// `serve`, `serve --workers N` and `worker`. With N > 1 the primary owns the database (embedded or
// DATABASE_URL: migrate, seed) and the background jobs, and N forked HTTP workers share the port,
// each with its own connection pool; PostgreSQL coordinates them (idempotency waits, row locks).

/** A start-up failure reported as its one line (exit 1), after stopping what was started. */
export class StartupFailed extends ReportedError {}

/** `serve --no-migrate` or MIGRATE_ON_START=false: migrations are a release step (docs/operator-guide.md "Release step"). */
export interface ServeOptions {
  migrate: boolean;
}

export async function serve(config: Config, log: Logger, workers: number, options: ServeOptions = { migrate: true }): Promise<number> {
  if (cluster.isWorker) return httpWorker(config, log.child({ pid: process.pid }));
  await checkPortFree(config);
  const db = await openDatabase(config, log, 'instance');
  let stopHttp: (signal: string) => Promise<void>;
  let jobs: BackgroundJobs | undefined;
  let seeded: DemoSeed | null;
  let port: number;
  try {
    seeded = await prepareSchema(db, config, log, options.migrate && config.MIGRATE_ON_START);
    if (workers > 1) ({ port, stop: stopHttp } = await forkHttpWorkers(db, config, log.child({ pid: process.pid }), workers));
    else ({ port, stop: stopHttp } = await listenInProcess(db, config, log));
    if (config.OUTBOX_IN_PROCESS) {
      jobs = startBackgroundJobs(db.orm, {
        config,
        clock: systemClock,
        log,
        handlers: outboxHandlers(config, log),
        sweeps: moduleSweeps(config, log),
      });
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  // Before the line that says it is up: whoever waits for that line may stop it at once.
  onStopSignal(
    log,
    async (signal) => {
      await stopHttp(signal);
      await jobs?.stop();
      await db.close();
    },
    { drain_ms: config.SHUTDOWN_DRAIN_MS },
  );
  const base = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${port}`;
  log.info({ url: base, database: db.embedded ? 'embedded' : 'DATABASE_URL', workers }, 'listening');
  if (seeded) console.error(`\n${describeSeed(seeded, base)}\n`);
  console.error(describeEndpoints(base));
  return new Promise<number>(() => undefined);
}

/**
 * Under the start lock, so instances starting at once take turns: the pending migrations applied
 * (or, with migrating left to a release step, refused when any are pending: new code never runs on
 * an old schema), then demo data on an empty embedded development database only; `serve` on
 * DATABASE_URL never seeds (`seed --demo` does).
 */
async function prepareSchema(db: Database, config: Config, log: Logger, migrate: boolean): Promise<DemoSeed | null> {
  return withStartLock(
    db.orm,
    async () => {
      if (migrate) {
        const applied = await applyPending(db.orm);
        if (applied.length) log.info({ applied }, 'migrations applied');
      } else {
        const pending = await pendingMigrations(db.orm);
        if (pending.length)
          throw new StartupFailed(
            `the schema is behind this release: ${pending.length} migration${pending.length === 1 ? '' : 's'} pending (${pending[0]}${pending.length > 1 ? ', …' : ''}); run migrate first`,
          );
      }
      if (!db.embedded || config.NODE_ENV === 'production') return null;
      return seedDemo(db.orm.em.fork(), systemClock.now());
    },
    log,
  );
}

/** `worker`: the background jobs without HTTP, on DATABASE_URL or a running `serve`'s embedded database. */
export async function worker(config: Config, log: Logger): Promise<number> {
  const db = await openDatabase(config, log, 'client');
  const jobs = startBackgroundJobs(db.orm, {
    config,
    clock: systemClock,
    log,
    handlers: outboxHandlers(config, log),
    sweeps: moduleSweeps(config, log),
  });
  // Before the line that says it started: whoever waits for that line may stop it at once (the
  // line reaches them from a write thread while this one may not have run on yet).
  onStopSignal(log, async () => {
    // Each job finishes the unit it is running (an outbox batch, a sweep, webhook attempts under way) and starts no other.
    await jobs.stop();
    await db.close();
  });
  log.info(
    {
      database: db.embedded ? 'embedded' : 'DATABASE_URL',
      outbox_poll_ms: config.OUTBOX_POLL_MS,
      idempotency_sweep_ms: config.IDEMPOTENCY_SWEEP_MS,
    },
    'worker started',
  );
  return new Promise<number>(() => undefined);
}

/** The outbox topics delivered wherever background jobs run: mail (docs/partner-guide.md "E-mail") and events, fanned out to webhook endpoints (docs/partner-guide.md "Webhooks"). */
export function outboxHandlers(config: Config, log: Logger): Record<string, OutboxHandler> {
  return {
    [MAIL_TOPIC]: mailHandler({ config, clock: systemClock, log }),
    [WEBHOOK_EVENT_TOPIC]: webhookFanOut({ clock: systemClock, config, log }),
  };
}

/** The modules' periodic jobs, run beside the outbox wherever background jobs run. */
export function moduleSweeps(config: Config, log: Logger): Sweep[] {
  const webhooks = webhookDeliveryLoop({ clock: systemClock, config, log });
  return [
    {
      name: 'booking sessions',
      everyMs: config.SESSION_SWEEP_MS,
      run: (orm) => expireBookingSessions(orm.em.fork(), { clock: systemClock, config, log }),
    },
    // Access codes past their day give their visit back (docs/partner-guide.md "Access codes"), on the sessions' interval.
    {
      name: 'access codes',
      everyMs: config.SESSION_SWEEP_MS,
      run: async (orm) => {
        const swept = await expireAccessCodes(orm.em.fork(), { clock: systemClock });
        return swept.expired + swept.sessionsExpired;
      },
    },
    {
      name: 'issued passes',
      everyMs: config.SESSION_SWEEP_MS,
      run: (orm) => expireIssuedPasses(orm.em.fork(), { clock: systemClock, config, log }),
    },
    {
      name: 'hosted sessions',
      everyMs: config.SESSION_SWEEP_MS,
      run: (orm) => expireHostedSessions(orm.em.fork(), { clock: systemClock, config, log }),
    },
    // Polled at least 4 times a second: an event's first attempt goes out within 2 s of its fan-out's poll.
    { name: 'webhook deliveries', everyMs: Math.min(config.OUTBOX_POLL_MS, 250), run: webhooks.run, stop: webhooks.stop },
  ];
}

/**
 * The stop sequence on SIGTERM or SIGINT (docs/operator-guide.md "Stopping an instance"): `stop`
 * runs once, then "stopped" and exit 0 (1 if it failed). Returns the way to begin the same
 * sequence without a signal (an HTTP worker told by its primary).
 *
 * One stop often arrives twice at once: Ctrl-C reaches the whole process group while a parent
 * passes it on (src/cli/node-flags.ts, a `--workers` primary), and systemd signals every process
 * of the service. So a signal within SECOND_SIGNAL_AFTER_MS of the first is that same stop; a later
 * one exits at once with 128 + its number (130 for a second Ctrl-C), cutting what still runs (an
 * embedded PostgreSQL left behind is stopped by the next start).
 */
function onStopSignal(log: Logger, stop: (signal: string) => Promise<void>, fields: object = {}): (signal: string, by?: string) => void {
  let stopping = false;
  let firstSignalAt: number | undefined;
  // The log writes asynchronously, and pino's flush does not wait for a write under way (the exit
  // then writes what follows it first): end with nothing left to run, so the last lines go out in
  // order, and exit anyway after a second if something still holds the process open.
  const end = (code: number) => {
    process.exitCode = code;
    process.channel?.unref();
    setTimeout(() => process.exit(code), 1000).unref();
  };
  const exitNow = (code: number) => log.flush(() => process.exit(code));
  const begin = (signal: string, by?: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, ...(by && { by }), ...fields }, 'shutting down');
    stop(signal).then(
      () => {
        log.info('stopped');
        end(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        end(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      return begin(signal);
    }
    if (Date.now() - firstSignalAt < SECOND_SIGNAL_AFTER_MS) return;
    log.warn({ signal }, 'second signal: exiting at once');
    exitNow(128 + os.constants.signals[signal]);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return begin;
}

const SECOND_SIGNAL_AFTER_MS = 1000;

/** Checked before the database starts, so a busy port costs nothing and leaves nothing running. */
async function checkPortFree(config: Config): Promise<void> {
  if (config.PORT === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err) => reject(listenFailure(err, config)));
    probe.listen({ port: config.PORT, host: config.HOST, exclusive: true }, () => probe.close(() => resolve()));
  });
}

function listenFailure(err: NodeJS.ErrnoException, config: Config): Error {
  if (err.code === 'EADDRINUSE') return new StartupFailed(`port ${config.PORT} is in use; set PORT`);
  if (err.code === 'EACCES') return new StartupFailed(`port ${config.PORT} needs privileges this process lacks; set PORT`);
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') return new StartupFailed(`cannot listen on ${config.HOST}; set HOST`);
  return err;
}

function listen(server: http.Server, config: Config): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(listenFailure(err, config)));
    server.listen(config.PORT, config.HOST, () => resolve((server.address() as net.AddressInfo).port));
  });
}

async function listenInProcess(db: Database, config: Config, log: Logger) {
  // Loaded here only: the other commands start faster without the GraphQL schema.
  const { buildServer, warmUp } = await import('../server.ts');
  await warmUp({ orm: db.orm, config, log });
  const draining = new Draining();
  const server = buildServer({ orm: db.orm, config, clock: systemClock, log, draining });
  const port = await listen(server, config);
  return { port, stop: () => drainAndClose(server, draining, { drainMs: config.SHUTDOWN_DRAIN_MS, log }) };
}

type WorkerMessage = { type: 'ready'; port: number } | { type: 'failed'; message: string };
/** The primary to an HTTP worker: stop as if `signal` had reached it. */
type PrimaryMessage = { type: 'stop'; signal: string };

/** One HTTP worker process (forked by the primary); the database URL comes in its environment. */
async function httpWorker(config: Config, log: Logger): Promise<number> {
  const send = (m: WorkerMessage) => process.send?.(m);
  let port: number;
  let stop: () => Promise<void>;
  try {
    const orm = await openOrm(config.DATABASE_URL!, config.DB_POOL_MAX, log, config.DB_ENGINE);
    const { buildServer, warmUp } = await import('../server.ts');
    await warmUp({ orm, config, log });
    const draining = new Draining();
    const server = buildServer({ orm, config, clock: systemClock, log, draining });
    port = await listen(server, config);
    stop = async () => {
      await drainAndClose(server, draining, { drainMs: config.SHUTDOWN_DRAIN_MS, log });
      await orm.close();
    };
  } catch (err) {
    send({ type: 'failed', message: (err as Error).message });
    process.exit(1);
  }
  // Ctrl-C reaches every process of the group, and systemd signals the whole control group, while
  // the primary also tells each worker to stop: both begin one sequence, and only a second signal
  // cuts it short. Set up before 'ready', which may be answered with a stop at once.
  const begin = onStopSignal(log, stop, { drain_ms: config.SHUTDOWN_DRAIN_MS });
  process.on('message', (m: PrimaryMessage) => {
    if (m?.type === 'stop') begin(m.signal, 'primary');
  });
  // The primary gone (killed): nothing routes connections here any more; finish what is in flight.
  process.on('disconnect', () => begin('disconnect'));
  send({ type: 'ready', port });
  return new Promise<number>(() => undefined);
}

/**
 * Forks `count` HTTP workers and waits until each listens; a worker that fails to start fails the
 * start-up. Later a worker that dies is logged and replaced; stop() ends them all.
 */
async function forkHttpWorkers(db: Database, config: Config, log: Logger, count: number) {
  let stopping = false;
  const fork = () => cluster.fork({ DATABASE_URL: db.url });
  const ready = (w: Worker) =>
    new Promise<number>((resolve, reject) => {
      w.on('message', (m: WorkerMessage) => {
        if (m.type === 'ready') resolve(m.port);
        else reject(new StartupFailed(m.message));
      });
      w.once('exit', (code, signal) => reject(new StartupFailed(`an HTTP worker exited during start-up (${signal ?? `code ${code}`})`)));
    });
  // `signal` given: a stop of the running server, each worker draining and finishing its requests,
  // so they are killed only well after that can take. Without it (a start-up that failed): SIGTERM.
  const stop = async (signal?: string) => {
    stopping = true;
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    const killAfterMs = signal ? config.SHUTDOWN_DRAIN_MS + IN_FLIGHT_LIMIT_MS + 10_000 : 10_000;
    await Promise.all(
      live.map(
        (w) =>
          new Promise<void>((resolve) => {
            const kill = setTimeout(() => w.process.kill('SIGKILL'), killAfterMs);
            w.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            if (signal && w.isConnected()) w.send({ type: 'stop', signal } satisfies PrimaryMessage);
            else w.process.kill('SIGTERM');
          }),
      ),
    );
    if (signal) log.info({ workers: live.length }, 'HTTP workers stopped');
  };
  let port: number;
  try {
    [port] = await Promise.all(Array.from({ length: count }, () => ready(fork())));
  } catch (err) {
    await stop();
    throw err;
  }
  cluster.on('exit', (w, code, signal) => {
    if (stopping || code === 0) return;
    log.warn({ worker_pid: w.process.pid, code, signal }, 'an HTTP worker died; starting another');
    // After a pause, so a worker that cannot start does not become a busy loop of forks.
    setTimeout(() => {
      if (stopping) return;
      const next = fork();
      ready(next).then(
        () => log.info({ worker_pid: next.process.pid }, 'replacement HTTP worker listening'),
        (err: unknown) => log.error({ err }, 'a replacement HTTP worker failed to start'),
      );
    }, 500);
  });
  return { port, stop };
}
