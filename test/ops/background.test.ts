import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startBackgroundJobs } from '../../src/platform/background.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { killStartedProcesses, Service } from './processes.ts';
import { until } from '../support/until.ts';

const app = useApp();

// Expired idempotency records are removed by the background sweep (in `serve` and in `worker`),
// never by a request; the outbox dispatcher runs beside it.

afterEach(async () => {
  await killStartedProcesses();
});
afterAll(async () => {
  await killStartedProcesses();
});

const log = createLogger({ LOG_LEVEL: 'silent' });

/** A completed record as runIdempotent stores it. */
const insertRecord = (resellerId: string, key: string, createdAt: Date) =>
  app.sql(
    `insert into idempotency_record (reseller_id, key, fingerprint, status_code, response_body, created_at)
   values (?, ?, repeat('0', 64), 201, to_jsonb('{}'::text), ?)`,
    [resellerId, key, createdAt],
  );

const recordKeys = async (resellerId: string) =>
  (await app.sql<{ key: string }>('select key from idempotency_record where reseller_id = ? order by key', [resellerId])).map((r) => r.key);

describe('startBackgroundJobs', () => {
  it('sweeps a record older than IDEMPOTENCY_TTL_SECONDS, keeps a live one, and delivers outbox rows', async () => {
    const reseller = await createReseller(app);
    const ttlMs = app.config.IDEMPOTENCY_TTL_SECONDS * 1000;
    await insertRecord(reseller.id, 'old', new Date(app.clock.now().getTime() - ttlMs - 1000));
    await insertRecord(reseller.id, 'new', new Date(app.clock.now().getTime() - ttlMs + 60_000));
    expect(await recordKeys(reseller.id)).toEqual(['new', 'old']);

    const delivered: string[] = [];
    await app.sql("insert into outbox (topic, payload, created_at, available_at) values ('test.background', '{}', ?, ?)", [
      app.clock.now(),
      app.clock.now(),
    ]);
    const jobs = startBackgroundJobs(app.orm, {
      config: { ...app.config, IDEMPOTENCY_SWEEP_MS: 20, OUTBOX_POLL_MS: 20 },
      clock: app.clock,
      log,
      handlers: {
        'test.background': async (row) => {
          delivered.push(row.id);
        },
      },
    });
    try {
      await until(async () => (await recordKeys(reseller.id)).length < 2, 'the expired record is swept');
      await until(async () => delivered.length > 0, 'the outbox row is delivered');
    } finally {
      await jobs.stop();
    }
    expect(await recordKeys(reseller.id)).toEqual(['new']);
    expect(delivered).toHaveLength(1);
    const [row] = await app.sql<{ processed: boolean }>(
      "select processed_at is not null as processed from outbox where topic = 'test.background'",
    );
    expect(row.processed).toBe(true);
  });
});

describe('worker', () => {
  it('sweeps expired records without HTTP and exits 0 on SIGTERM', async () => {
    const reseller = await createReseller(app);
    await insertRecord(reseller.id, 'stale', new Date(Date.now() - 3600_000));
    await insertRecord(reseller.id, 'live', new Date());
    const worker = new Service(['worker'], { DATABASE_URL: app.databaseUrl, IDEMPOTENCY_SWEEP_MS: '50' });
    await worker.waitForStdout(/"msg":"worker started"/);
    await until(async () => (await recordKeys(reseller.id)).length < 2, 'the worker sweeps the stale record');
    expect(await recordKeys(reseller.id)).toEqual(['live']);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.logLines().find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM' });
    // It never listened: a worker has no HTTP side.
    expect(worker.logLines().map((l) => l.msg)).not.toContain('listening');
  }, 60_000);
});
