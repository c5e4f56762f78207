import http from 'node:http';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { Receiver } from '../support/webhooks.ts';
import { samples } from '../support/metrics.ts';
import { killStartedProcesses, runCli, Service } from './processes.ts';

const app = useApp();

// /metrics answers for the whole server (docs/operator-guide.md "Metrics"): with `serve --workers 2`
// every scrape, whichever worker receives it, sums both workers and the primary (which runs the
// background jobs: outbox backlog, webhook attempts); `worker` answers on METRICS_PORT.

const T = 120_000;
const V3 = '/v3/api/business/reseller';
const DB_POOL_MAX = 4;
afterAll(async () => {
  await killStartedProcesses();
});

let service: Service;
let base: string;
let key: string;
/** What `seed --demo` printed: the demo keys and pass ids. */
let demo: string;

/** One scrape on a connection of its own (so successive scrapes spread over the workers); undefined when none answers within `timeoutMs`. */
function scrape(url: string, timeoutMs = 10_000): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}: ${text}`))));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(undefined);
    });
    req.on('error', reject);
  });
}

const metricsOf = async () => (await scrape(`${base}/metrics`))!;

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const requestPids = () =>
  service
    .logLines()
    .filter((l) => l.msg === 'request')
    .map((l) => l.pid as number);

describe('serve --workers 2: one scrape answers for the whole server', () => {
  it(
    'starts',
    async () => {
      // serve on DATABASE_URL never seeds: the demo's keys come from `seed --demo`, as an operator's would.
      const seeded = await runCli(['seed', '--demo'], { DATABASE_URL: app.databaseUrl });
      expect(seeded.code, seeded.stderr).toBe(0);
      demo = seeded.stdout;
      service = new Service(['serve', '--workers', '2'], {
        DATABASE_URL: app.databaseUrl,
        PORT: '0',
        DB_POOL_MAX: String(DB_POOL_MAX),
        OUTBOX_POLL_MS: '100',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_TIMEOUT_MS: '2000',
      });
      await service.waitForStdout(/"msg":"listening"/, 90_000);
      base = service.logLines().find((l) => l.msg === 'listening')!.url as string;
      key = /API key: (sk_[0-9A-Za-z]{40})/.exec(demo)![1];
    },
    T,
  );

  it(
    'K requests served by both workers › every scrape counts all K, and the pool of all three processes',
    async () => {
      const K = 40;
      const before = requestPids().length;
      const statuses = await Promise.all(
        Array.from({ length: K }, async () => {
          const res = await fetch(`${base}${V3}/passes`, { headers: { Authorization: `Bearer ${key}` } });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      expect(statuses).toEqual(Array(K).fill(200));
      // Both workers served some (each logs its requests with its pid; a line may follow its response).
      await until(
        'the request lines',
        async () => requestPids().length,
        (n) => n >= before + K,
      );
      expect(new Set(requestPids().slice(before)).size).toBe(2);

      const route = `method="GET",route="${V3}/passes"`;
      for (let i = 0; i < 6; i++) {
        const text = await metricsOf();
        expect(samples(text, 'http_requests_total').get(`${route},status="200"`), `scrape ${i}`).toBe(K);
        expect(samples(text, 'http_request_duration_seconds_count').get(route), `scrape ${i}`).toBe(K);
        expect(samples(text, 'http_request_duration_seconds_bucket').get(`le="+Inf",${route}`), `scrape ${i}`).toBe(K);
        expect(samples(text, 'cluster_scrape_workers')).toEqual(
          new Map([
            ['state="answered"', 2],
            ['state="missing"', 0],
          ]),
        );
        // Summed over the primary's pool and each worker's: three pools of DB_POOL_MAX.
        expect(samples(text, 'db_pool_max_connections').get(''), `scrape ${i}`).toBe(3 * DB_POOL_MAX);
        const pool = samples(text, 'db_pool_connections');
        const open = pool.get('state="idle"')! + pool.get('state="in_use"')!;
        expect(open).toBeGreaterThanOrEqual(2); // each worker has held one at least
        expect(open).toBeLessThanOrEqual(3 * DB_POOL_MAX);
        expect(samples(text, 'db_pool_waiting_requests').get('')).toBe(0);
        // Each family once: the processes' registries are summed, not written one after another.
        const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
        expect(new Set(types).size).toBe(types.length);
      }
      // The scrapes themselves were spread over both workers too.
      const scrapers = service
        .logLines()
        .filter((l) => l.msg === 'request' && l.url === '/metrics')
        .map((l) => l.pid);
      expect(new Set(scrapers).size).toBe(2);
    },
    T,
  );

  it(
    'an outbox row pending › backlog and age of the oldest, read at scrape time from the primary',
    async () => {
      // A topic no handler takes stays pending: the backlog the dispatcher would fall behind on.
      const [row] = await app.sql<{ id: string }>(
        `insert into outbox (topic, payload, created_at, available_at) values ('metrics-test', '{}'::jsonb, now() - interval '300 seconds', now())
         returning id`,
      );
      try {
        const first = await metricsOf();
        expect(samples(first, 'outbox_pending_rows').get('')).toBeGreaterThanOrEqual(1);
        const age = samples(first, 'outbox_oldest_pending_age_seconds').get('')!;
        expect(age).toBeGreaterThanOrEqual(300);
        await new Promise((r) => setTimeout(r, 1100));
        expect(samples(await metricsOf(), 'outbox_oldest_pending_age_seconds').get('')).toBeGreaterThan(age);
      } finally {
        await app.sql('delete from outbox where id = ?', [row.id]);
      }
      // Handled (here: gone), it no longer counts.
      await until(
        'the backlog to drain',
        async () => samples(await metricsOf(), 'outbox_oldest_pending_age_seconds').get('')!,
        (a) => a < 300,
      );
    },
    T,
  );

  it(
    'an event for two webhook endpoints › attempts by outcome, failures and the latency histogram count them',
    async () => {
      const ok = await Receiver.start({ status: 200 });
      const broken = await Receiver.start({ status: 500 });
      try {
        for (const receiver of [ok, broken]) {
          const res = await fetch(`${base}${V3}/webhook_endpoints`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ url: receiver.url(), enabled_events: ['*'] }),
          });
          expect(res.status, await res.text()).toBe(201);
        }
        const passId = /pass (pass_[0-9A-Z]{26})\s+\S.*\(PREPAID\)/.exec(demo)![1];
        const issued = await fetch(`${base}${V3}/issued_passes`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'metrics-webhook-event' },
          body: JSON.stringify({ pass_id: passId, first_name: 'Grace', last_name: 'Hopper', email: 'grace.metrics@example.com' }),
        });
        expect(issued.status, await issued.text()).toBe(201);
        await until(
          'both receivers to be called',
          async () => [ok.receipts.length, broken.receipts.length],
          ([a, b]) => a >= 1 && b >= 1,
        );

        // Each attempt is counted when its answer arrives, just after the receiver has it.
        const counted = (t: string) => samples(t, 'webhook_attempts_total');
        const text = await until(
          'the attempts to be counted',
          metricsOf,
          (t) =>
            counted(t).get('outcome="delivered"') === ok.receipts.length && counted(t).get('outcome="failed"') === broken.receipts.length,
        );
        // The first attempt of each delivery (the failed one is retried 5 s later at the earliest).
        expect(broken.receipts.length).toBeGreaterThanOrEqual(1);
        expect(samples(text, 'webhook_failures_total').get('reason="status"')).toBe(broken.receipts.length);
        expect(samples(text, 'webhook_attempt_duration_seconds_count').get('outcome="failed"')).toBe(broken.receipts.length);
        const counts = samples(text, 'webhook_attempt_duration_seconds_count');
        expect(counts.get('outcome="delivered"')).toBe(ok.receipts.length);
        expect(samples(text, 'webhook_attempt_duration_seconds_bucket').get('le="+Inf",outcome="delivered"')).toBe(ok.receipts.length);
        expect(samples(text, 'webhook_attempt_duration_seconds_sum').get('outcome="delivered"')).toBeGreaterThan(0);
      } finally {
        await ok.down();
        await broken.down();
      }
    },
    T,
  );

  it(
    'rate-limit rejections by either worker › summed in every scrape',
    async () => {
      // Failed authentications are limited per client address, counted in each process (no REDIS_URL):
      // 60 unknown keys from this address pass each worker's burst of 50 only in part.
      const statuses = await Promise.all(
        Array.from({ length: 120 }, async (_, i) => {
          const res = await fetch(`${base}${V3}/passes`, { headers: { Authorization: `Bearer sk_${String(i).padStart(40, '0')}` } });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      const refused = statuses.filter((s) => s === 429).length;
      expect(refused).toBeGreaterThan(0);
      const rejected = await until(
        'the rejections',
        async () => samples(await metricsOf(), 'rate_limit_rejections_total').get('limit="failed_auth"') ?? 0,
        (n) => n >= refused,
      );
      expect(rejected).toBe(refused);
      expect(samples(await metricsOf(), 'http_requests_total').get(`method="GET",route="${V3}/passes",status="429"`)).toBe(refused);
    },
    T,
  );

  it(
    'a worker that does not answer › the scrape answers without it, saying so',
    async () => {
      const [stuck] = [...new Set(requestPids())];
      process.kill(stuck, 'SIGSTOP');
      try {
        // A connection handed to the stopped worker is not answered; the next goes to the other one.
        let text: string | undefined;
        for (let i = 0; i < 4 && text === undefined; i++) text = await scrape(`${base}/metrics`, 5000);
        expect(text).toBeDefined();
        expect(samples(text!, 'cluster_scrape_workers')).toEqual(
          new Map([
            ['state="answered"', 1],
            ['state="missing"', 1],
          ]),
        );
      } finally {
        process.kill(stuck, 'SIGCONT');
      }
      await until(
        'both workers again',
        async () => samples(await metricsOf(), 'cluster_scrape_workers').get('state="answered"'),
        (n) => n === 2,
      );
    },
    T,
  );

  it(
    'stops',
    async () => {
      service.child.kill('SIGTERM');
      expect(await service.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );
});

describe('worker with METRICS_PORT', () => {
  it(
    'answers GET /metrics (the background jobs and its pool) and /healthz, and nothing else',
    async () => {
      const jobs = new Service(['worker'], { DATABASE_URL: app.databaseUrl, METRICS_PORT: '0', OUTBOX_POLL_MS: '100' });
      try {
        await jobs.waitForStdout(/"msg":"worker started"/, 60_000);
        const url = jobs.logLines().find((l) => l.msg === 'metrics listening')!.url as string;
        const text = (await scrape(url))!;
        for (const [family, type] of [
          ['outbox_pending_rows', 'gauge'],
          ['outbox_oldest_pending_age_seconds', 'gauge'],
          ['webhook_attempts_total', 'counter'],
          ['webhook_failures_total', 'counter'],
          ['webhook_attempt_duration_seconds', 'histogram'],
          ['db_pool_connections', 'gauge'],
          ['process_resident_memory_bytes', 'gauge'],
        ])
          expect(text, family).toContain(`# TYPE ${family} ${type}\n`);
        expect(samples(text, 'outbox_pending_rows').get('')).toBeGreaterThanOrEqual(0);
        expect(text).not.toContain('http_requests_total');
        const health = await fetch(new URL('/healthz', url));
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({ status: 'ok' });
        expect((await fetch(new URL('/graphql', url))).status).toBe(404);
      } finally {
        jobs.child.kill('SIGTERM');
        expect(await jobs.exited).toEqual({ code: 0, signal: null });
      }
    },
    T,
  );
});

describe('worker with a METRICS_PORT that is taken', () => {
  it(
    'exits 1 with one line naming the setting',
    async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      try {
        const port = (taken.address() as net.AddressInfo).port;
        const run = await runCli(['worker'], { DATABASE_URL: app.databaseUrl, METRICS_PORT: String(port) });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(`METRICS_PORT ${port} is in use; set METRICS_PORT`);
      } finally {
        await new Promise((r) => taken.close(r));
      }
    },
    T,
  );
});
