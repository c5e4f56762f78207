import { afterAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { isRunning, killStartedProcesses, runCli, Service } from './processes.ts';

const app = useApp();

// `serve --workers 2` on a fresh database (DATABASE_URL) that `seed --demo` filled, as an operator
// would (serve on DATABASE_URL never seeds): the primary migrates, two forked HTTP workers share
// the port. Retries of one request spread over both processes still move money once: PostgreSQL,
// not the process, holds the idempotency key.

const T = 120_000;
const V3 = '/v3/api/business/reseller';
afterAll(async () => {
  await killStartedProcesses();
});

let service: Service;
let base: string;
/** What `seed --demo` printed: the demo keys and pass ids. */
let demo: string;

const requestPids = () =>
  service
    .logLines()
    .filter((l) => l.msg === 'request')
    .map((l) => l.pid as number);

describe('serve --workers 2', () => {
  it(
    'starts two HTTP workers after migrating, and seeds nothing',
    async () => {
      const seeded = await runCli(['seed', '--demo'], { DATABASE_URL: app.databaseUrl });
      expect(seeded.code, seeded.stderr).toBe(0);
      demo = seeded.stdout;
      // IDEMPOTENCY_WAIT_MS: long enough that no retry gives up waiting for the first request.
      service = new Service(['serve', '--workers', '2'], {
        DATABASE_URL: app.databaseUrl,
        PORT: '0',
        IDEMPOTENCY_WAIT_MS: '60000',
        IDEMPOTENCY_SWEEP_MS: '100',
      });
      await service.waitForStdout(/"msg":"listening"/, 90_000);
      const listening = service.logLines().find((l) => l.msg === 'listening')!;
      expect(listening).toMatchObject({ workers: 2, database: 'DATABASE_URL' });
      base = listening.url as string;
      expect(Number(new URL(base).port)).toBeGreaterThan(0);
      const [resellers] = await app.sql<{ n: string }>('select count(*) as n from reseller');
      expect(Number(resellers.n)).toBe(2); // the seed's two, none added by serve
    },
    T,
  );

  it(
    '20 concurrent POST /issued_passes (a PREPAID pass) with one Idempotency-Key: one client, one pass, one debit, 20 identical 201s from both processes',
    async () => {
      const key = /API key: (sk_[0-9A-Za-z]{40})/.exec(demo)![1];
      const passId = /pass (pass_[0-9A-Z]{26})\s+\S.*\(PREPAID\)/.exec(demo)![1];
      const [reseller] = await app.sql<{ reseller_id: string }>('select reseller_id from pass_package where id = ?', [passId]);
      const debitsBefore = await count('business_transaction', "reseller_id = ? and type = 'DEBIT'", [reseller.reseller_id]);
      const body = JSON.stringify({ pass_id: passId, first_name: 'Ada', last_name: 'Lovelace', email: 'ada.cluster@example.com' });
      const replies = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await fetch(`${base}${V3}/issued_passes`, {
            method: 'POST',
            body,
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'one-key-for-all-20' },
          });
          return { status: res.status, text: await res.text() };
        }),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(new Set(replies.map((r) => r.text)).size).toBe(1);
      const issued = JSON.parse(replies[0].text) as { id: string; client_id: string };
      expect(await count('client', 'email = ?', ['ada.cluster@example.com'])).toBe(1);
      expect(await count('issued_pass', 'client_id = ?', [issued.client_id])).toBe(1);
      expect(await count('business_transaction', "reseller_id = ? and type = 'DEBIT'", [reseller.reseller_id])).toBe(debitsBefore + 1);

      // Each worker logs the requests it served with its pid: both served some of the 20.
      // (pino may write a line after its response has gone.)
      for (let i = 0; i < 100 && requestPids().length < 20; i++) await new Promise((r) => setTimeout(r, 50));
      const pids = requestPids();
      expect(pids).toHaveLength(20);
      expect(new Set(pids).size).toBe(2);
      expect(pids).not.toContain(service.child.pid);
    },
    T,
  );

  it(
    'a key revoked from another process › refused by both workers within 1 s (each caches keys for KEY_CACHE_MS)',
    async () => {
      const key = /API key: (sk_[0-9A-Za-z]{40})/.exec(demo)![1];
      const get = () => fetch(`${base}${V3}/passes`, { headers: { Authorization: `Bearer ${key}` } });
      // Warm both workers' caches: requests spread over the two processes.
      const before = requestPids().length;
      await Promise.all(Array.from({ length: 10 }, get));
      for (let i = 0; i < 100 && requestPids().length < before + 10; i++) await new Promise((r) => setTimeout(r, 20));
      expect(new Set(requestPids().slice(before)).size).toBe(2);
      // Revoked by the database, as `keys revoke` in another process does.
      await app.sql("update api_key set revoked_at = now() where secret_hash = encode(sha256(convert_to(?, 'UTF8')), 'hex')", [key]);
      await new Promise((r) => setTimeout(r, 1000));
      const afterRevoke = requestPids().length;
      const statuses = (await Promise.all(Array.from({ length: 10 }, get))).map((r) => r.status);
      expect(statuses).toEqual(Array(10).fill(401));
      for (let i = 0; i < 100 && requestPids().length < afterRevoke + 10; i++) await new Promise((r) => setTimeout(r, 20));
      expect(new Set(requestPids().slice(afterRevoke)).size).toBe(2); // both processes refused it
    },
    T,
  );

  it(
    'runs the idempotency sweep in the background (OUTBOX_IN_PROCESS defaults to true)',
    async () => {
      const [reseller] = await app.sql<{ id: string }>('select id from reseller limit 1');
      await app.sql(
        `insert into idempotency_record (reseller_id, key, fingerprint, status_code, response_body, created_at)
      values (?, 'long-expired', repeat('0', 64), 201, to_jsonb('{}'::text), ?)`,
        [reseller.id, new Date(Date.now() - 3600_000)],
      );
      for (let i = 0; i < 200 && (await count('idempotency_record', "key = 'long-expired'", [])) > 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await count('idempotency_record', "key = 'long-expired'", [])).toBe(0);
      expect(await count('idempotency_record', "key = 'one-key-for-all-20'", [])).toBe(1); // live records stay
    },
    T,
  );

  it(
    'a worker killed with SIGKILL is logged and replaced',
    async () => {
      const [victim] = [...new Set(requestPids())];
      process.kill(victim, 'SIGKILL');
      await service.waitForStdout(/"msg":"replacement HTTP worker listening"/, 60_000);
      const died = service.logLines().find((l) => l.msg === 'an HTTP worker died; starting another');
      expect(died).toMatchObject({ worker_pid: victim, signal: 'SIGKILL' });
      const replacement = service.logLines().find((l) => l.msg === 'replacement HTTP worker listening')!.worker_pid as number;
      expect(isRunning(replacement)).toBe(true);
      // Still answering on the same port.
      for (let i = 0; i < 4; i++) expect((await fetch(`${base}/healthz`)).status).toBe(200);
    },
    T,
  );

  it(
    'SIGTERM stops the workers, then the primary exits 0',
    async () => {
      const workers = [
        ...new Set(
          service
            .logLines()
            .filter((l) => typeof l.pid === 'number' && l.pid !== service.child.pid)
            .map((l) => l.pid as number),
        ),
      ];
      service.child.kill('SIGTERM');
      expect(await service.exited).toEqual({ code: 0, signal: null });
      for (const pid of workers) expect(isRunning(pid), `worker ${pid}`).toBe(false);
    },
    T,
  );
});

async function count(table: string, where: string, params: unknown[]): Promise<number> {
  const [row] = await app.sql<{ n: string }>(`select count(*) as n from ${table} where ${where}`, params);
  return Number(row.n);
}
