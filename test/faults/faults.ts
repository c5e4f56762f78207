import net from 'node:net';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { inject, expect } from 'vitest';
import { MikroORM } from '@mikro-orm/postgresql';
import { pino } from 'pino';
import { configWith } from '../../src/config.ts';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { ormOptions } from '../../src/db/orm.ts';
import { ManualClock } from '../../src/platform/clock.ts';
import { buildServer, warmUp } from '../../src/server.ts';
import { startBackgroundJobs, type BackgroundJobs } from '../../src/platform/background.ts';
import { moduleSweeps } from '../../src/cli/serve.ts';
import { UNLIMITED, type TestApp } from '../support/app.ts';
import { withDatabase } from '../support/global-setup.ts';
import { createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { manyClients } from '../support/bookings-invariants.ts';
import { createCreditPackage, type TestCreditPackage } from '../support/credits.ts';
import { clientBody } from '../support/factories.ts';
import { call, gql, v3, type Reply } from '../support/http.ts';
import { until } from '../support/until.ts';

// The database unreachable (decisions §3, §12), against the real PostgreSQL: a burst of mixed
// reads and writes on both surfaces, the database taken away under it, and what must hold.

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it is true, failing after `seconds` (a bounded wait, not a timing assertion). */
export async function eventually(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  // A check that throws (the database still away) counts as not yet.
  await until(() => check().catch(() => false), what, seconds * 1000, 100);
}

/** A TCP proxy between the app and PostgreSQL, which the test can cut (listener closed, connections reset) and restore on the same port. */
export interface DbProxy {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startProxy(targetUrl: string): Promise<DbProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const [a, b] of [
          [client, upstream],
          [upstream, client],
        ]) {
          sockets.add(a);
          a.on('error', () => b.destroy());
          a.on('close', () => {
            sockets.delete(a);
            b.destroy();
          });
          a.pipe(b);
        }
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as AddressInfo).port;
        server = s;
        resolve();
      });
    });
  const cut = async () => {
    const s = server;
    server = undefined;
    const closed = s ? new Promise((r) => s.close(r)) : Promise.resolve();
    for (const socket of sockets) socket.resetAndDestroy();
    await closed;
  };
  await listen();
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), cut, restore: listen, close: cut };
}

export interface LogLine {
  level: number;
  msg: string;
  err?: unknown;
  [k: string]: unknown;
}

/**
 * The real server in-process on a fresh database, like test/support/app.ts's startApp, but reaching
 * the database at `reach(url)` (a proxy) and keeping every log line it writes. With `background`,
 * the background jobs run beside it as `serve` runs them (the modules' sweeps, the idempotency
 * sweep, an outbox dispatcher), each every 50 ms.
 */
export async function startFaultApp(
  reach: (url: string) => string = (u) => u,
  { background = false } = {},
): Promise<{ app: TestApp; logs: LogLine[] }> {
  const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
  await createDatabaseIfMissing(inject('adminUrl'), database, inject('templateDatabase'));
  const databaseUrl = reach(withDatabase(inject('adminUrl'), database));
  const config = configWith({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    OUTBOX_POLL_MS: '50',
    IDEMPOTENCY_SWEEP_MS: '50',
    SESSION_SWEEP_MS: '50',
    ...UNLIMITED,
  });
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const log = pino({ level: 'info', base: undefined }, sink);
  const orm = await MikroORM.init(ormOptions(databaseUrl, config.DB_POOL_MAX));
  const clock = new ManualClock();
  await warmUp({ orm, config, log });
  const server: http.Server = buildServer({ orm, config, clock, log });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Outbox rows are marked handled (nothing is sent): the dispatcher's reads and writes are what is under test.
  const noop = async () => undefined;
  const jobs: BackgroundJobs | undefined = background
    ? startBackgroundJobs(orm, { config, clock, log, handlers: { mail: noop, event: noop }, sweeps: moduleSweeps(config, log) })
    : undefined;
  const app: TestApp = {
    baseUrl: `http://127.0.0.1:${port}`,
    orm,
    clock,
    config,
    databaseUrl,
    sql: (query, params = []) => orm.em.fork().execute(query, params as unknown[]),
    async close() {
      await jobs?.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await orm.close();
    },
  };
  return { app, logs };
}

/** What the burst works on: a booking world, a credit package, a class with room for all, and clients of their own per write (taken in turn). */
export interface FaultWorld {
  w: BookingWorld;
  pkg: TestCreditPackage;
  instanceId: string;
  clients: { id: string; issuedPassId: string }[];
  taken: number;
}

export async function faultWorld(app: TestApp, clients: number): Promise<FaultWorld> {
  const w = await createBookingWorld(app);
  const pkg = await createCreditPackage(app, w.reseller, { credits: 20, price: 300 });
  const instance = await instanceIn(app, w.gym.classId, 30, { capacity: 1000 });
  return {
    w,
    pkg,
    instanceId: instance.id,
    clients: await manyClients(app, w, clients, `faults${randomBytes(3).toString('hex')}`),
    taken: 0,
  };
}

const ISSUE = `mutation($input: IssuePassInput!) { issuePass(input: $input) { __typename ... on IssuedPassPayload { issuedPass { id } } ... on Error { code } } }`;
const PURCHASE = `mutation($input: PurchaseCreditsInput!) { purchaseCredits(input: $input) { __typename ... on CreditPurchase { id } ... on Error { code } } }`;
const BOOK = `mutation($input: BookClassInput!) { bookClass(input: $input) { __typename ... on ClassBookingInitiation { classInstanceId } ... on Error { code } } }`;
export const PASSES = '{ passes(first: 5) { edges { node { id name } } } }';

/** One request of the burst: a write carries an Idempotency-Key, `effects` counts what it wrote, and `succeeded` tells its success apart. */
export interface Op {
  label: string;
  surface: 'rest' | 'graphql';
  key?: string;
  run(): Promise<Reply>;
  succeeded(reply: Reply): boolean;
  effects?(): Promise<number>;
}

const count = async (app: TestApp, sql: string, params: unknown[]) => Number((await app.sql<{ n: string }>(sql, params))[0].n);

/** Op `i` of a burst named `tag`: issue a pass, book a class, buy credits (REST and GraphQL), and reads; each write on its own client. */
export function op(app: TestApp, f: FaultWorld, tag: string, i: number): Op {
  const { w } = f;
  const key = `${tag}-${i}`;
  // A booking or a purchase on a client of its own: its rows are then exactly what it wrote.
  const client = i % 8 >= 2 && i % 8 <= 5 ? f.clients[f.taken++] : w.client;
  if (!client) throw new Error('faultWorld: too few clients for the ops');
  const email = `${key}@example.com`;
  const rest = (status: number) => (r: Reply) => r.status === status;
  const graphql = (field: string, type: string) => (r: Reply) =>
    r.status === 200 && !r.body.errors && r.body.data?.[field]?.__typename === type;
  const clientsByEmail = () => count(app, 'select count(*) as n from client where reseller_id = ? and email = ?', [w.reseller.id, email]);
  const bookings = () =>
    count(app, 'select count(*) as n from booking where client_id = ? and class_instance_id = ?', [client.id, f.instanceId]);
  const purchases = () => count(app, 'select count(*) as n from credit_purchase where client_id = ?', [client.id]);
  switch (i % 8) {
    case 0:
      return {
        label: 'REST issue pass',
        surface: 'rest',
        key,
        succeeded: rest(201),
        effects: clientsByEmail,
        run: () => v3(app, '/issued_passes', { key: w.reseller.key, body: clientBody(w.passId, { email }), idempotencyKey: key }),
      };
    case 1:
      return {
        label: 'GraphQL issuePass',
        surface: 'graphql',
        key,
        succeeded: graphql('issuePass', 'IssuedPassPayload'),
        effects: clientsByEmail,
        run: () =>
          gql(
            app,
            w.reseller.key,
            ISSUE,
            { input: { passId: w.passId, firstName: 'Ada', lastName: 'Lovelace', email } },
            { idempotencyKey: key },
          ),
      };
    case 2:
      return {
        label: 'REST book class',
        surface: 'rest',
        key,
        succeeded: rest(201),
        effects: bookings,
        run: () =>
          v3(app, '/bookings/class', {
            key: w.reseller.key,
            body: { class_instance_id: f.instanceId, client_id: client.id },
            idempotencyKey: key,
          }),
      };
    case 3:
      return {
        label: 'GraphQL bookClass',
        surface: 'graphql',
        key,
        succeeded: graphql('bookClass', 'ClassBookingInitiation'),
        effects: bookings,
        run: () =>
          gql(app, w.reseller.key, BOOK, { input: { classInstanceId: f.instanceId, clientId: client.id } }, { idempotencyKey: key }),
      };
    case 4:
      return {
        label: 'REST purchase credits',
        surface: 'rest',
        key,
        succeeded: rest(201),
        effects: purchases,
        run: () =>
          v3(app, '/credit_purchases', {
            key: w.reseller.key,
            body: { client_id: client.id, credit_package_id: f.pkg.id },
            idempotencyKey: key,
          }),
      };
    case 5:
      return {
        label: 'GraphQL purchaseCredits',
        surface: 'graphql',
        key,
        succeeded: graphql('purchaseCredits', 'CreditPurchase'),
        effects: purchases,
        run: () =>
          gql(app, w.reseller.key, PURCHASE, { input: { clientId: client.id, creditPackageId: f.pkg.id } }, { idempotencyKey: key }),
      };
    case 6:
      return {
        label: 'REST GET issued pass',
        surface: 'rest',
        succeeded: rest(200),
        run: () => v3(app, `/issued_passes/${w.client.id}`, { key: w.reseller.key }),
      };
    default:
      return {
        label: 'GraphQL passes',
        surface: 'graphql',
        succeeded: (r) => r.status === 200 && !r.body.errors && Array.isArray(r.body.data?.passes?.edges),
        run: () => gql(app, w.reseller.key, PASSES),
      };
  }
}

/** Runs `ops` `concurrency` at a time; each op's reply beside it. */
export async function burst(ops: Op[], concurrency: number): Promise<{ op: Op; reply: Reply }[]> {
  const results: { op: Op; reply: Reply }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ops.length) {
        const o = ops[next++];
        results.push({ op: o, reply: await o.run() });
      }
    }),
  );
  return results;
}

/** A 503 of the database unreachable, in the surface's shape, with Retry-After. */
export function isUnavailable(op: Pick<Op, 'surface'>, reply: Reply): boolean {
  if (reply.status !== 503 || !/^[1-9]\d*$/.test(reply.headers.get('retry-after') ?? '')) return false;
  return op.surface === 'rest'
    ? reply.body?.error?.code === 'service_unavailable'
    : reply.body?.errors?.length > 0 && reply.body.errors.every((e: any) => e.extensions?.code === 'service_unavailable');
}

/** Every reply is the op's success or the 503; never a 500 or anything else. */
export function expectSuccessOr503(results: { op: Op; reply: Reply }[]): void {
  const wrong = results
    .filter(({ op: o, reply }) => !o.succeeded(reply) && !isUnavailable(o, reply))
    .map(({ op: o, reply }) => `${o.label}: ${reply.status} ${reply.headers.get('retry-after') ?? ''} ${reply.text.slice(0, 300)}`);
  expect(wrong).toEqual([]);
}

/**
 * After recovery: each write that answered 503 is sent again with its key and succeeds (a replay
 * of what committed, or the first run); every write, whichever way it went, wrote exactly once.
 */
export async function expectRetriesWriteOnce(results: { op: Op; reply: Reply }[]): Promise<{ retried: number; replayed: number }> {
  let retried = 0;
  let replayed = 0;
  for (const { op: o, reply } of results) {
    if (!o.key) continue;
    if (!o.succeeded(reply)) {
      const again = await o.run();
      expect(o.succeeded(again), `${o.label} retried: ${again.status} ${again.text.slice(0, 300)}`).toBe(true);
      retried++;
      if (again.headers.get('x-idempotent-replayed') === 'true') replayed++;
    }
    expect(await o.effects!(), `${o.label} ${o.key}: rows written`).toBe(1);
  }
  return { retried, replayed };
}

export const readyz = (app: TestApp) => call(app, '/readyz');
