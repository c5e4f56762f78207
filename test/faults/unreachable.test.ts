import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { expectBookingInvariants, worldScope } from '../support/bookings-invariants.ts';
import { clientBody } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import type { TestApp } from '../support/app.ts';
import {
  burst,
  eventually,
  expectRetriesWriteOnce,
  expectSuccessOr503,
  faultWorld,
  isUnavailable,
  op,
  PASSES,
  readyz,
  sleep,
  startFaultApp,
  startProxy,
  type DbProxy,
  type FaultWorld,
  type LogLine,
  type Op,
} from './faults.ts';

// decisions §3, §12: PostgreSQL unreachable. The app reaches the database through a TCP proxy;
// cut under load (its connections reset, its port refusing), every request answers 503
// `service_unavailable` with Retry-After on both surfaces, /readyz 503, and the log says so once;
// restored, the same app serves again, says so once, and every write happened exactly once. The
// background jobs run beside it all along and log nothing more.

let app: TestApp;
let logs: LogLine[];
let proxy: DbProxy;
let f: FaultWorld;
// The load the test runs while the database is away; stopped before the app closes, whatever happened.
let stop = false;
let load: Promise<void> = Promise.resolve();
beforeAll(async () => {
  proxy = await startProxy(inject('adminUrl'));
  ({ app, logs } = await startFaultApp(
    (url) => {
      const proxied = new URL(proxy.url);
      proxied.pathname = new URL(url).pathname;
      return proxied.toString();
    },
    { background: true },
  ));
  f = await faultWorld(app, 40);
});
afterAll(async () => {
  stop = true;
  await load.catch(() => undefined);
  await app?.close();
  await proxy?.close();
});

const LEVEL_WARN = 40;
const downLines = () => logs.filter((l) => /^database unreachable/.test(l.msg));
const upLines = () => logs.filter((l) => /^database reachable again/.test(l.msg));

describe('PostgreSQL unreachable', () => {
  it(
    'answers 503 with Retry-After on both surfaces and /readyz, logs once down and once back, and recovers without a restart',
    { timeout: 120_000 },
    async () => {
      expect((await readyz(app)).status).toBe(200);

      // Load, and the database cut from under it.
      const during: Awaited<ReturnType<typeof burst>> = [];
      let n = 0;
      load = (async () => {
        while (!stop)
          during.push(
            ...(await burst(
              Array.from({ length: 8 }, () => op(app, f, 'cut', n++)),
              8,
            )),
          );
      })();
      await sleep(200);
      await proxy.cut();

      // While it is away: each surface, a read and a write, answers 503 with Retry-After; so does /readyz.
      const ready = await readyz(app);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      const probes: { op: Pick<Op, 'surface' | 'label'>; run: () => ReturnType<typeof v3> }[] = [
        { op: { surface: 'rest', label: 'REST GET' }, run: () => v3(app, `/issued_passes/${f.w.client.id}`, { key: f.w.reseller.key }) },
        {
          op: { surface: 'rest', label: 'REST POST' },
          run: () =>
            v3(app, '/issued_passes', {
              key: f.w.reseller.key,
              body: clientBody(f.w.passId, { email: 'down@example.com' }),
              idempotencyKey: 'down-rest',
            }),
        },
        { op: { surface: 'graphql', label: 'GraphQL query' }, run: () => gql(app, f.w.reseller.key, PASSES) },
        {
          op: { surface: 'graphql', label: 'GraphQL mutation' },
          run: () =>
            gql(
              app,
              f.w.reseller.key,
              'mutation($input: IssuePassInput!) { issuePass(input: $input) { __typename } }',
              { input: { passId: f.w.passId, firstName: 'Ada', lastName: 'Lovelace', email: 'down@example.com' } },
              { idempotencyKey: 'down-gql' },
            ),
        },
      ];
      for (const probe of probes) {
        const reply = await probe.run();
        expect(isUnavailable(probe.op, reply), `${probe.op.label}: ${reply.status} ${reply.text}`).toBe(true);
      }
      stop = true;
      await load;

      expectSuccessOr503(during);
      expect(during.filter(({ op: o, reply }) => isUnavailable(o, reply)).length).toBeGreaterThan(0);
      // One line when it went down: a warning, no stack; nothing logged per failed request or background run.
      expect(downLines()).toHaveLength(1);
      expect(downLines()[0].level).toBe(LEVEL_WARN);
      expect(downLines()[0].err).toBeUndefined();
      expect(logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);

      // Back: the same app (its pool) serves again, and the log says so once.
      await proxy.restore();
      await eventually('/readyz answers 200', 20, async () => (await readyz(app)).status === 200);
      await eventually('the log says the database is back', 10, async () => upLines().length > 0);
      const after = await burst(
        Array.from({ length: 16 }, () => op(app, f, 'cut', n++)),
        4,
      );
      expect(
        after.filter(({ op: o, reply }) => !o.succeeded(reply)).map(({ op: o, reply }) => `${o.label}: ${reply.status} ${reply.text}`),
      ).toEqual([]);

      // The writes that answered 503, sent again with their keys: each happens once; the ledgers balance.
      const { retried } = await expectRetriesWriteOnce(during);
      expect(retried).toBeGreaterThan(0);
      await expectRetriesWriteOnce(after);
      const rest = await v3(app, '/issued_passes', {
        key: f.w.reseller.key,
        body: clientBody(f.w.passId, { email: 'down@example.com' }),
        idempotencyKey: 'down-rest',
      });
      expect(rest.status, rest.text).toBe(201);
      await expectBookingInvariants(app, worldScope(f.w));

      expect(downLines()).toHaveLength(1);
      expect(upLines()).toHaveLength(1);
      expect(logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    },
  );
});
