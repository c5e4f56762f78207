import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { expectBookingInvariants, worldScope } from '../support/bookings-invariants.ts';
import {
  burst,
  eventually,
  expectRetriesWriteOnce,
  expectSuccessOr503,
  faultWorld,
  isUnavailable,
  op,
  readyz,
  sleep,
  startFaultApp,
  type FaultWorld,
  type LogLine,
} from './faults.ts';
import type { TestApp } from '../support/app.ts';

// decisions §3, §12: every backend of the app's database terminated by an administrator
// (pg_terminate_backend, SQLSTATE 57P01) while a burst of reads and writes is in flight on both
// surfaces. Each answer is its success or 503 `service_unavailable` with Retry-After, never a 500;
// the pool recovers without a restart; a write that answered 503 left nothing half done, and sent
// again with its Idempotency-Key it is replayed or runs, once; the ledgers balance.

let app: TestApp;
let logs: LogLine[];
let f: FaultWorld;
let admin: pg.Client;
beforeAll(async () => {
  ({ app, logs } = await startFaultApp());
  f = await faultWorld(app, 60);
  admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await app?.close();
});

const database = () => new URL(app.databaseUrl).pathname.slice(1);
const terminateAll = async () =>
  (
    await admin.query(
      'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database()],
    )
  ).rows[0].n as number;

describe('every backend terminated under load', () => {
  it(
    'answers success or 503 with Retry-After, recovers without a restart, and each write happens once on retry',
    { timeout: 120_000 },
    async () => {
      const ops = Array.from({ length: 96 }, (_, i) => op(app, f, 'terminated', i));
      let done = false;
      let terminated = 0;
      const killer = (async () => {
        // Terminated again and again while the burst runs: requests meet it mid-statement, mid-transaction and at connect.
        await sleep(50);
        while (!done) {
          terminated += await terminateAll();
          await sleep(150);
        }
      })();
      const results = await burst(ops, 12).finally(() => {
        done = true;
      });
      await killer;
      expect(terminated).toBeGreaterThan(0);

      expectSuccessOr503(results);
      const unavailable = results.filter(({ op: o, reply }) => isUnavailable(o, reply));
      // The burst met the terminations: some answers are 503 (none of them a 500, above).
      expect(unavailable.length, 'requests answered 503').toBeGreaterThan(0);

      // No restart: the same app serves again once the pool has new connections.
      await eventually('/readyz answers 200', 20, async () => (await readyz(app)).status === 200);
      const after = await burst(
        Array.from({ length: 16 }, (_, i) => op(app, f, 'after-terminated', i)),
        4,
      );
      expect(
        after.filter(({ op: o, reply }) => !o.succeeded(reply)).map(({ op: o, reply }) => `${o.label}: ${reply.status} ${reply.text}`),
      ).toEqual([]);

      const { retried } = await expectRetriesWriteOnce(results);
      expect(retried).toBeGreaterThan(0);
      await expectRetriesWriteOnce(after);
      await expectBookingInvariants(app, worldScope(f.w));

      // No stack per request: the failures were the database unreachable, never an unexpected error.
      expect(logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    },
  );
});
