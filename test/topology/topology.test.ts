import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkLedgers } from '../../bench/bookings/ledgers.ts';
import { seedBookings } from '../../bench/bookings/seed.ts';
import { V3 } from '../../bench/bookings/requests.ts';
import { configSchema, engineFromEnv } from '../../src/config.ts';
import { withTransaction } from '../../src/db/engine/index.ts';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { openOrm } from '../../src/db/orm.ts';
import { createCreditPackage } from '../../src/modules/credits/index.ts';
import { killStartedProcesses, repoRoot, runCli, Service } from '../ops/processes.ts';
import { withDatabase } from '../support/global-setup.ts';
import { until } from '../support/until.ts';
import { Receiver } from '../support/webhooks.ts';
import { startProxy, type DbProxy } from '../faults/faults.ts';
import { freePort, HaProxy, renderConfig } from './haproxy.ts';
import { newTally, runLoad, type World } from './load.ts';

// deploy/ as CI runs it (docs/operator-guide.md "Deploying on several machines"): Debian's HAProxy
// with deploy/haproxy.cfg in front of two `serve` instances and a `worker`, all with the settings
// of deploy/gateway.env.example, on a fresh database and the Redis at 127.0.0.1:6379; `migrate`
// first, as the release step. Under at least 20 s of mixed load through HAProxy each instance is
// stopped (SIGTERM) and started again in turn, and the client sees no failure; then every write
// is in the database once, every event reached the webhook receiver once, a rate limit is one
// limit across both instances, a revoked key is refused by both within 1 s, and the client
// address the instances count is the one HAProxy appended to X-Forwarded-For.

const LOAD_SECONDS = 20;
const CONNECTIONS = 8;
/** Clients issued before the load (a count coprime with the world's 1,000 class instances). */
const CLIENTS = 101;
const REDIS_URL = 'redis://127.0.0.1:6379';

/** deploy/gateway.env.example's settings (KEY=value lines). */
function envTemplate(): Record<string, string> {
  const text = fs.readFileSync(path.join(repoRoot, 'deploy', 'gateway.env.example'), 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => /^[A-Z_0-9]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** The last line a CLI command printed, as JSON (its answer), after checking it succeeded. */
function answer<T = any>(run: Awaited<ReturnType<typeof runCli>>): T {
  expect(run.code, `${run.args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as T;
}

const redisPrefix = `topology_${randomBytes(4).toString('hex')}`;
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-topology-'));
let databaseUrl: string;
let env: Record<string, string>;
let haproxy: HaProxy;
/** The instances reach PostgreSQL through it, so a test can take the database away from both (the worker and the CLI go direct). */
let dbProxy: DbProxy;
let front: string;
const ports: number[] = [];
const instances: Service[] = [];
let worker: Service;
let receiver: Receiver;
let world: World;
const tally = newTally();
const restarts: { instance: number; exit: { code: number | null; signal: NodeJS.Signals | null } }[] = [];
/** For the log line: how long each step of a restart took, in ms. */
const rollTimes: string[] = [];

const instanceBase = (i: number) => `http://127.0.0.1:${ports[i]}`;

async function startInstance(i: number): Promise<Service> {
  const service = new Service(['serve'], { ...env, DATABASE_URL: dbProxy.url, PORT: String(ports[i]) });
  instances[i] = service;
  await service.waitForStdout(/"msg":"listening"/, 90_000);
  return service;
}

/** Until HAProxy's checks have both instances in rotation (or the one named). */
async function upInHaProxy(server?: string): Promise<void> {
  await until(
    async () => {
      const status = await haproxy.serverStatus();
      return server === undefined
        ? Object.values(status).every((s) => s === 'UP') && Object.keys(status).length === 2
        : status[server] === 'UP';
    },
    `HAProxy sees ${server ?? 'both instances'} UP`,
  );
}

async function post(base: string, key: string, route: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  // A fresh, empty database on the suite's server: the release step below creates the schema.
  const database = `${inject('runPrefix')}topology`;
  await createDatabaseIfMissing(inject('adminUrl'), database);
  databaseUrl = withDatabase(inject('adminUrl'), database);
  for (let i = 0; i < 4; i++) ports.push(await freePort());
  const [listen, stats] = [ports.pop()!, ports.pop()!];
  front = `http://127.0.0.1:${listen}`;
  env = {
    ...envTemplate(),
    DATABASE_URL: databaseUrl,
    SECRETS_KEY: randomBytes(32).toString('hex'),
    ACCESS_CODE_SIGNING_KEY: randomBytes(32).toString('hex'),
    PUBLIC_BASE_URL: front,
    REDIS_URL,
    RATE_LIMIT_REDIS_PREFIX: redisPrefix,
    HOST: '127.0.0.1',
    // The receiver below is on loopback.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // Small enough that the X-Forwarded-For test reaches it with a few requests.
    RATE_LIMIT_FAILED_AUTH_PER_SECOND: '5',
    RATE_LIMIT_FAILED_AUTH_BURST: '20',
    OUTBOX_POLL_MS: '200',
    // The load's one API key may send more than the default 100 requests a second on a quiet machine;
    // the limits test below sets a reseller's own limit, which comes first.
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '200000',
    DB_ENGINE: engineFromEnv(),
  };

  // The release step, before any instance starts.
  const migrated = await runCli(['migrate'], env, 120_000);
  expect(migrated.code, `${migrated.stdout}\n${migrated.stderr}`).toBe(0);

  // The bookings bench's world (bench/bookings/seed.ts), and a credit package to buy.
  const orm = await openOrm(databaseUrl, 2, undefined, engineFromEnv());
  try {
    const seed = await seedBookings(orm.em.fork(), new Date());
    const creditPackageId = await withTransaction(orm.em.fork(), async (tx) => {
      const pkg = createCreditPackage(tx, {
        resellerId: seed.resellerId,
        name: 'Topology credits',
        credits: 100,
        price: 1,
        currency: seed.currency,
        createdAt: new Date(),
      });
      await tx.flush();
      return pkg.id;
    });
    world = { seed, creditPackageId };
  } finally {
    await orm.close();
  }

  const configFile = path.join(workDir, 'haproxy.cfg');
  fs.writeFileSync(
    configFile,
    renderConfig({
      LISTEN: `127.0.0.1:${listen}`,
      INSTANCE_1: `127.0.0.1:${ports[0]}`,
      INSTANCE_2: `127.0.0.1:${ports[1]}`,
      STATS: `127.0.0.1:${stats}`,
    }),
  );
  dbProxy = await startProxy(databaseUrl);
  haproxy = new HaProxy(configFile, `http://127.0.0.1:${stats}`);
  worker = new Service(['worker'], env);
  await Promise.all([startInstance(0), startInstance(1), worker.waitForStdout(/"msg":"worker started"/, 90_000)]);
  await upInHaProxy();

  // Every event of the world's reseller goes to the receiver, the clients' passes included.
  receiver = await Receiver.start();
  const endpoint = await post(front, world.seed.apiKey, `${V3}/webhook_endpoints`, { url: receiver.url(), enabled_events: ['*'] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  const clients: World['seed']['clients'] = [];
  for (let i = 0; i < CLIENTS; i++) {
    const issued = await post(front, world.seed.apiKey, `${V3}/issued_passes`, {
      pass_id: world.seed.passId,
      first_name: 'Topology',
      last_name: `Member ${i}`,
      email: `topology.member+${i}@example.com`,
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    clients.push({ id: issued.body.client_id, issuedPassId: issued.body.id });
    tally.written.issuedPasses.add(issued.body.id);
  }
  world.seed.clients = clients;
}, 300_000);

afterAll(async () => {
  await haproxy?.stop();
  await dbProxy?.close();
  await killStartedProcesses();
  await receiver?.down();
  fs.rmSync(workDir, { recursive: true, force: true });
  // The rate-limit counts this run left in the shared Redis.
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
});

describe('deploy/: two instances behind HAProxy, a worker, PostgreSQL and Redis', () => {
  it('deploy/gateway.env.example names only settings the service reads', () => {
    const known = new Set(Object.keys(configSchema.shape));
    expect(Object.keys(envTemplate()).filter((name) => !known.has(name))).toEqual([]);
    for (const name of [
      'NODE_ENV',
      'DATABASE_URL',
      'SECRETS_KEY',
      'ACCESS_CODE_SIGNING_KEY',
      'PUBLIC_BASE_URL',
      'REDIS_URL',
      'TRUST_PROXY',
    ]) {
      expect(envTemplate()).toHaveProperty(name);
    }
    expect(envTemplate()).toMatchObject({ NODE_ENV: 'production', TRUST_PROXY: '1', OUTBOX_IN_PROCESS: 'false' });
  });

  it(`under ${LOAD_SECONDS} s of mixed load through HAProxy, each instance stopped (SIGTERM) and started again in turn: no request fails`, async () => {
    let rolled = false;
    const started = Date.now();
    const load = runLoad(front, world, CONNECTIONS, tally, () => rolled && Date.now() - started >= LOAD_SECONDS * 1000);
    const roll = (async () => {
      await new Promise((r) => setTimeout(r, 3000));
      for (const i of [0, 1]) {
        const old = instances[i]!;
        const t0 = Date.now();
        old.child.kill('SIGTERM');
        // Its /readyz says 503 at once, and HAProxy takes it out while it still serves (the drain).
        const outBeforeExit = await Promise.race([
          until(
            async () => (await haproxy.serverStatus())[`gateway${i + 1}`]?.startsWith('DOWN') ?? false,
            `HAProxy sees gateway${i + 1} DOWN`,
          ).then(() => true),
          old.exited.then(() => false),
        ]);
        expect(outBeforeExit, `HAProxy took instance ${i + 1} out of rotation before it exited`).toBe(true);
        restarts.push({ instance: i, exit: await old.exited });
        const t1 = Date.now();
        await startInstance(i);
        const t2 = Date.now();
        await upInHaProxy(`gateway${i + 1}`);
        rollTimes.push(
          `instance ${i + 1}: stopped in ${t1 - t0} ms, listening ${t2 - t1} ms later, UP in HAProxy ${Date.now() - t2} ms after that`,
        );
      }
      rolled = true;
    })();
    await Promise.all([load, roll.catch((err) => ((rolled = true), Promise.reject(err)))]);

    expect(restarts).toEqual([
      { instance: 0, exit: { code: 0, signal: null } },
      { instance: 1, exit: { code: 0, signal: null } },
    ]);
    expect(tally.failures).toEqual([]);
    expect(tally.sent).toBeGreaterThan(100);
    expect(tally.written.bookings.size).toBeGreaterThan(0);
    expect(tally.written.creditPurchases.size).toBeGreaterThan(0);
    console.log(
      `topology: ${tally.sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ${tally.retriedThenOk} retried after a 503, 0 failed; ` +
        `${tally.written.bookings.size} bookings, ${tally.written.cancelled.size} cancels, ${tally.written.creditPurchases.size} credit purchases, ${tally.written.issuedPasses.size} passes issued; ${rollTimes.join('; ')}`,
    );
  }, 300_000);

  it('every acknowledged write is in the database exactly once, and every ledger sums to its balance', async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const ids = async (sql: string) => new Set((await client.query<{ id: string }>(sql)).rows.map((r) => r.id));
      expect(await ids('select id from booking')).toEqual(tally.written.bookings);
      expect(await ids(`select id from booking where status = 'CANCELLED'`)).toEqual(tally.written.cancelled);
      expect(await ids('select id from credit_purchase')).toEqual(tally.written.creditPurchases);
      expect(await ids('select id from issued_pass')).toEqual(tally.written.issuedPasses);
    } finally {
      await client.end();
    }
    expect((await checkLedgers(databaseUrl)).mismatches).toEqual([]);
  });

  it('the worker delivers every event to the webhook receiver once', async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    let events: string[];
    try {
      events = (await client.query<{ id: string }>('select id from event where reseller_id = $1', [world.seed.resellerId])).rows.map(
        (r) => r.id,
      );
    } finally {
      await client.end();
    }
    expect(events.length).toBeGreaterThan(tally.written.bookings.size);
    const waited = Date.now();
    await until(() => events.every((id) => receiver.of(id).length > 0), 'every event reached the receiver', 240_000, 200);
    console.log(`topology: ${events.length} events, the last delivered ${Date.now() - waited} ms after the load ended`);
    // A second delivery would come within a poll or two of the first.
    await new Promise((r) => setTimeout(r, 1000));
    const perEvent = new Map<string, number>();
    for (const r of receiver.receipts)
      perEvent.set(String(r.headers['webhook-id']), (perEvent.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    expect([...perEvent].filter(([, n]) => n !== 1)).toEqual([]);
    expect(new Set(perEvent.keys())).toEqual(new Set(events));
  }, 300_000);

  it('a reseller limit set with `resellers limits` is one limit across both instances (Redis), not one per instance', async () => {
    const reseller = answer(await runCli(['resellers', 'create', '--name', 'Topology Limits', '--currency', 'EUR'], env));
    const key = answer(await runCli(['keys', 'create', reseller.id], env)).api_key as string;
    answer(await runCli(['resellers', 'limits', reseller.id, '--per-second', '1', '--burst', '10'], env));
    const started = Date.now();
    const answers: number[][] = [[], []];
    for (let n = 0; n < 40; n++) {
      const i = n % 2;
      const res = await fetch(`${instanceBase(i)}${V3}/passes`, { headers: { Authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      answers[i]!.push(res.status);
    }
    const seconds = (Date.now() - started) / 1000;
    const allowed = answers.flat().filter((s) => s === 200).length;
    console.log(`topology: ${allowed} of 40 requests allowed in ${seconds.toFixed(1)} s over both instances (burst 10, 1 a second)`);
    // The burst of 10, plus what one point a second refilled meanwhile; per instance it would be twice that.
    expect(allowed).toBeGreaterThanOrEqual(10);
    expect(allowed).toBeLessThanOrEqual(10 + Math.ceil(seconds));
    expect(answers.flat().filter((s) => s !== 200 && s !== 429)).toEqual([]);
    for (const mine of answers) expect(mine).toContain(429);
  });

  it('a key revoked with `keys revoke` is refused by both instances within 1 s', async () => {
    const reseller = answer(await runCli(['resellers', 'create', '--name', 'Topology Revocation', '--currency', 'EUR'], env));
    const key = answer<{ id: string; api_key: string }>(await runCli(['keys', 'create', reseller.id], env));
    const status = async (i: number) => {
      const res = await fetch(`${instanceBase(i)}${V3}/passes`, { headers: { Authorization: `Bearer ${key.api_key}` } });
      await res.arrayBuffer();
      return res.status;
    };
    // Both instances have the key in their cache.
    expect([await status(0), await status(1)]).toEqual([200, 200]);
    answer(await runCli(['keys', 'revoke', key.id], env));
    const revokedAt = Date.now();
    const refusedAfter = await Promise.all(
      [0, 1].map(async (i) => {
        while ((await status(i)) !== 401) await new Promise((r) => setTimeout(r, 50));
        return Date.now() - revokedAt;
      }),
    );
    console.log(`topology: the revoked key refused ${refusedAfter.map((ms) => `${ms} ms`).join(' and ')} after \`keys revoke\` returned`);
    for (const ms of refusedAfter) expect(ms).toBeLessThanOrEqual(1000);
  });

  it("the instances count the client's address as the one HAProxy appended to X-Forwarded-For, not one the client wrote", async () => {
    // Unknown keys, each request claiming another address: counted as one address (127.0.0.1, which
    // HAProxy appended), the failed-authentication burst of 20 is reached; trusting the client's
    // own entry, it never would be.
    const statuses: number[] = [];
    for (let n = 0; n < 40; n++) {
      const res = await fetch(`${front}${V3}/passes`, {
        headers: { Authorization: `Bearer sk_${randomBytes(20).toString('hex')}`, 'X-Forwarded-For': `198.51.100.${n + 1}` },
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
  });
  it('the database unreachable from both instances: every answer is 503 service_unavailable with Retry-After, logged once each, and 200 again without a restart', async () => {
    const pids = instances.map((i) => i.child.pid);
    const auth = { Authorization: `Bearer ${world.seed.apiKey}` };
    // The test before left this address over its failed-authentication limit (refused before any key
    // is read): start once it has refilled.
    await until(async () => (await fetch(`${front}${V3}/passes`, { headers: auth })).status === 200, 'the address allowed again');
    await dbProxy.cut();
    const answers: { status: number; code?: string; retryAfter: string | null }[] = [];
    // Through HAProxy while the instances answer 503 themselves and after their /readyz has taken both out.
    const until503s = Date.now() + 4000;
    while (Date.now() < until503s) {
      const res = await fetch(`${front}${V3}/passes`, { headers: auth });
      const body = (await res.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
      answers.push({ status: res.status, code: body?.error?.code, retryAfter: res.headers.get('retry-after') });
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((a) => !(a.status === 503 && a.code === 'service_unavailable' && a.retryAfter))).toEqual([]);
    await until(
      async () => Object.values(await haproxy.serverStatus()).every((s) => s.startsWith('DOWN')),
      'HAProxy sees both instances DOWN',
    );

    await dbProxy.restore();
    await upInHaProxy();
    const back = await fetch(`${front}${V3}/passes`, { headers: auth });
    expect(back.status).toBe(200);
    expect(instances.map((i) => i.child.pid)).toEqual(pids);
    for (const instance of instances) {
      const said = (msg: string) => instance.logLines().filter((l) => l.msg === msg).length;
      expect(said('database unreachable; answering 503 until it is back')).toBe(1);
      expect(said('database reachable again')).toBe(1);
      expect(instance.logLines().filter((l) => (l.level as number) >= 50)).toEqual([]);
    }
  });

  // Last: it stops both instances.
  it('with no instance in rotation, HAProxy answers 503 service_unavailable in the error envelope, with Retry-After', async () => {
    await Promise.all(
      instances.map(async (instance) => {
        instance.child.kill('SIGTERM');
        expect((await instance.exited).code).toBe(0);
      }),
    );
    await until(
      async () => Object.values(await haproxy.serverStatus()).every((s) => s.startsWith('DOWN')),
      'HAProxy sees both instances DOWN',
    );
    const res = await fetch(`${front}${V3}/passes`, { headers: { Authorization: `Bearer ${world.seed.apiKey}` } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as { error: Record<string, string> };
    expect(body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
    expect(body.error.request_id).toMatch(/^lb_[0-9A-F]+$/);
  });
});
