// Soak (bench/README.md "Soak"): our `serve` as deployed, under a mixed load of reads and writes at
// 50 connections for 10 minutes, then three checks: no request failed (every answer is the one its
// request expects), the server's resident memory stayed flat (growth under 10 % from the end of the
// first minute to the end), and every ledger sums to its balance. Exits 1 when a check fails.
// Prints a markdown table on stdout, progress on stderr; writes nothing into the repository.
//
//   node bench/soak.ts [--minutes 10 --connections 50]
//
// With DATABASE_URL it creates (and drops) a database `bench_soak_<random>` on that server;
// without, it starts an embedded PostgreSQL under the system temp folder and removes it afterwards.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { migrate, openOrm } from '../src/db/orm.ts';
import { createCreditPackage } from '../src/modules/credits/index.ts';
import { withTransaction } from '../src/db/engine/index.ts';
import { startOurServer } from './request-path/processes.ts';
import { openDatabase } from './database.ts';
import { onCleanup, runBench } from './lifecycle.ts';
import { issueClients, seedBookings, type BookingsSeed } from './bookings/seed.ts';
import { loadClass, loadSpa, V3 } from './bookings/requests.ts';
import { checkLedgers } from './bookings/ledgers.ts';
import { flag } from './flags.ts';

const MINUTES = flag('--minutes', 10);
const CONNECTIONS = flag('--connections', 50);
const SAMPLE_MS = 5000;

const startedAt = Date.now();
const progress = (message: string) =>
  process.stderr.write(`[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(4)} s] ${message}\n`);

interface Request {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  expect: number;
  graphql?: boolean;
}
type Kind = (w: World) => Request | undefined;

interface World {
  seed: BookingsSeed;
  creditPackageId: string;
  booked: string[];
  k: Record<string, number>;
}

const next = (w: World, kind: string) => (w.k[kind] = (w.k[kind] ?? 0) + 1);
const client = (w: World, n: number) => w.seed.clients[n % w.seed.clients.length]!;
const gql = (query: string, variables: object = {}): Request => ({
  method: 'POST',
  path: '/graphql',
  body: { query, variables },
  expect: 200,
  graphql: true,
});

/** The mix: [kind, weight, request]. 70 % reads, 30 % writes, each with the answer it must get. */
const MIX: [string, number, Kind][] = [
  ['GET /passes', 14, () => ({ method: 'GET', path: `${V3}/passes?limit=10`, expect: 200 })],
  ['GET /clients/{id}', 14, (w) => ({ method: 'GET', path: `${V3}/clients/${client(w, next(w, 'c')).id}`, expect: 200 })],
  ['GET /clients/{id}/credits', 10, (w) => ({ method: 'GET', path: `${V3}/clients/${client(w, next(w, 'cc')).id}/credits`, expect: 200 })],
  [
    'GET /clients/{id}/bookings',
    10,
    (w) => ({ method: 'GET', path: `${V3}/clients/${client(w, next(w, 'cb')).id}/bookings?limit=10`, expect: 200 }),
  ],
  ['GET /providers near', 6, () => ({ method: 'GET', path: `${V3}/providers?lat=52.52&lon=13.405&limit=10`, expect: 200 })],
  ['GraphQL passes', 10, () => gql('{ passes(first: 10) { edges { node { id name price } } } }')],
  [
    'GraphQL client',
    6,
    (w) => gql('query($id: ID!) { client(id: $id) { id firstName creditBalance } }', { id: client(w, next(w, 'gc')).id }),
  ],
  [
    'POST /bookings/class',
    10,
    (w) => {
      const s = loadClass(w.seed, next(w, 'class'));
      return { method: 'POST', path: s.path, body: JSON.parse(s.body!), expect: 201 };
    },
  ],
  [
    'POST /bookings/spa',
    7,
    (w) => {
      const s = loadSpa(w.seed, next(w, 'spa'));
      return { method: 'POST', path: s.path, body: JSON.parse(s.body!), expect: 201 };
    },
  ],
  [
    'POST /bookings/{id}/cancel',
    4,
    (w) => {
      const id = w.booked.shift();
      return id === undefined ? undefined : { method: 'POST', path: `${V3}/bookings/${id}/cancel`, body: {}, expect: 200 };
    },
  ],
  [
    'POST /credit_purchases',
    4,
    (w) => ({
      method: 'POST',
      path: `${V3}/credit_purchases`,
      body: { client_id: client(w, next(w, 'cp')).id, credit_package_id: w.creditPackageId },
      expect: 201,
    }),
  ],
  [
    'POST /issued_passes',
    5,
    (w) => ({
      method: 'POST',
      path: `${V3}/issued_passes`,
      expect: 201,
      body: { pass_id: w.seed.passId, first_name: 'Soak', last_name: `Client ${next(w, 'issue')}`, email: `soak+${w.k.issue}@example.com` },
    }),
  ],
];
const TOTAL_WEIGHT = MIX.reduce((n, [, weight]) => n + weight, 0);

interface Sample {
  at: number;
  kib: number;
  /** Of `kib`, pages mapped from files (RssFile: the node binary and its libraries as they get run), which the kernel can drop and read again. */
  fileKib: number;
  memory?: Breakdown;
}
interface Tally {
  sent: number;
  failed: number;
  latencies: number[];
  failures: Map<string, number>;
}

function pick(): [string, Kind] {
  let r = Math.random() * TOTAL_WEIGHT;
  for (const [name, weight, kind] of MIX) if ((r -= weight) < 0) return [name, kind];
  return [MIX[0]![0], MIX[0]![2]];
}

async function send(base: string, key: string, request: Request): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  if (request.method === 'POST' && !request.graphql) headers['Idempotency-Key'] = randomUUID();
  if (request.graphql) headers.Accept = 'application/graphql-response+json';
  const res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The server's resident set and, of it, what is mapped from files (/proc/<pid>/status VmRSS, RssFile), in KiB. */
function resident(pid: number): { kib: number; fileKib: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { kib: field('VmRSS'), fileKib: field('RssFile') };
}
const rssKiB = (pid: number): number => resident(pid).kib;
/** Where the server's memory is, from its /metrics (prom-client's Node metrics), in MiB. */
interface Breakdown {
  heapUsed: number;
  heapCommitted: number;
  newSpace: number;
  oldSpace: number;
  external: number;
}
const MEMORY_METRICS: Record<keyof Breakdown, RegExp> = {
  heapUsed: /^nodejs_heap_size_used_bytes (\S+)/m,
  heapCommitted: /^nodejs_heap_size_total_bytes (\S+)/m,
  newSpace: /^nodejs_heap_space_size_total_bytes\{space="new"\} (\S+)/m,
  oldSpace: /^nodejs_heap_space_size_total_bytes\{space="old"\} (\S+)/m,
  external: /^nodejs_external_memory_bytes (\S+)/m,
};
async function memoryBreakdown(base: string): Promise<Breakdown> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const mib = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN) / 2 ** 20;
  return Object.fromEntries(Object.entries(MEMORY_METRICS).map(([k, pattern]) => [k, mib(pattern)])) as unknown as Breakdown;
}

/** "V8 heap 73 in use of 140 committed (new 64, old 70), external 5, mapped from files 60, the rest 170" in MiB. */
function describe(b: Breakdown, sample?: Pick<Sample, 'kib' | 'fileKib'>): string {
  const rest =
    sample === undefined
      ? ''
      : `, mapped from files ${Math.round(sample.fileKib / 1024)} MiB, the rest ${Math.round((sample.kib - sample.fileKib) / 1024 - b.heapCommitted - b.external)} MiB (native: the C allocator, stacks)`;
  return `V8 heap ${b.heapUsed.toFixed(0)} MiB in use of ${b.heapCommitted.toFixed(0)} committed (new space ${b.newSpace.toFixed(0)}, old ${b.oldSpace.toFixed(0)}), external ${b.external.toFixed(0)} MiB${rest}`;
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};

async function main(): Promise<void> {
  const db = await openDatabase('soak', progress);
  onCleanup(() => db.drop());
  progress('migrating and seeding …');
  const orm = await openOrm(db.url, 2);
  let seed: BookingsSeed;
  let creditPackageId: string;
  try {
    await migrate(orm);
    seed = await seedBookings(orm.em.fork(), new Date());
    creditPackageId = await withTransaction(orm.em.fork(), async (tx) => {
      const pkg = createCreditPackage(tx, {
        resellerId: seed.resellerId,
        name: 'Soak credits',
        credits: 100,
        price: 1,
        currency: seed.currency,
        createdAt: new Date(),
      });
      await tx.flush();
      return pkg.id;
    });
  } finally {
    await orm.close();
  }
  // The calling shell's allocator settings reach the server, to compare allocators (bench/README.md
  // "Soak"): glibc's MALLOC_ARENA_MAX, or another malloc through LD_PRELOAD (jemalloc); and
  // NODE_OPTIONS, for a diagnosis such as heap snapshots on a signal (--heapsnapshot-signal).
  const allocator = Object.fromEntries(
    ['MALLOC_ARENA_MAX', 'LD_PRELOAD', 'MALLOC_CONF', 'NODE_OPTIONS'].flatMap((name) =>
      process.env[name] ? [[name, process.env[name]]] : [],
    ),
  );
  const server = await startOurServer('our server', db.url, { OUTBOX_IN_PROCESS: 'true', ...allocator });
  const base = `http://127.0.0.1:${server.port}`;
  progress(`issuing the pass to ${seed.clients.length || 'the'} clients over HTTP …`);
  await issueClients(base, seed);
  const world: World = { seed, creditPackageId, booked: [], k: {} };

  const tallies = new Map<string, Tally>(MIX.map(([name]) => [name, { sent: 0, failed: 0, latencies: [], failures: new Map() }]));
  const rss: Sample[] = [];
  // Beside the resident set, where it is (the server's /metrics): V8's heap in use grows when
  // something is kept; its committed spaces and the external buffers when V8 or a native part sizes
  // itself; the rest is the C allocator's.
  const sampler = setInterval(() => {
    const sample: Sample = { at: Date.now(), ...resident(server.child.pid!) };
    rss.push(sample);
    void memoryBreakdown(base).then(
      (b) => {
        sample.memory = b;
      },
      () => {},
    );
  }, SAMPLE_MS);
  const loadStarted = Date.now();
  const until = loadStarted + MINUTES * 60_000;
  progress(`load: ${CONNECTIONS} connections for ${MINUTES} min …`);
  let reported = loadStarted;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < until) {
        const [name, kind] = pick();
        const request = kind(world);
        if (!request) continue;
        const tally = tallies.get(name)!;
        const t0 = performance.now();
        let outcome: string;
        try {
          const res = await send(base, seed.apiKey, request);
          const errors = request.graphql ? res.body?.errors : undefined;
          outcome =
            res.status === request.expect && !errors?.length
              ? 'ok'
              : `${res.status} ${res.body?.error?.code ?? errors?.[0]?.extensions?.code ?? ''}`;
          if (outcome === 'ok' && name === 'POST /bookings/class' && world.booked.length < 10_000) world.booked.push(res.body.booking_id);
        } catch (err) {
          outcome = `request failed: ${(err as Error).message}`;
        }
        tally.sent++;
        tally.latencies.push(performance.now() - t0);
        if (outcome !== 'ok') {
          tally.failed++;
          tally.failures.set(outcome, (tally.failures.get(outcome) ?? 0) + 1);
        }
        if (Date.now() - reported > 60_000) {
          reported = Date.now();
          const sent = [...tallies.values()].reduce((n, t) => n + t.sent, 0);
          const last = [...rss].reverse().find((x) => x.memory)?.memory;
          progress(
            `${Math.round((Date.now() - loadStarted) / 60_000)} min: ${sent} requests, RSS ${Math.round(rssKiB(server.child.pid!) / 1024)} MiB${last ? `, ${describe(last)}` : ''}`,
          );
        }
      }
    }),
  );
  clearInterval(sampler);
  rss.push({ at: Date.now(), ...resident(server.child.pid!) });
  const seconds = (Date.now() - loadStarted) / 1000;
  progress('load done; checking the ledgers …');
  await new Promise((r) => setTimeout(r, 2000)); // the in-process outbox settles
  const ledgers = await checkLedgers(db.url);

  const afterFirstMinute = rss.find((s) => s.at - loadStarted >= 60_000 && s.memory) ?? rss[0]!;
  const lastMemory = [...rss].reverse().find((x) => x.memory);
  const end = rss[rss.length - 1]!;
  const growth = (end.kib - afterFirstMinute.kib) / afterFirstMinute.kib;
  const totalSent = [...tallies.values()].reduce((n, t) => n + t.sent, 0);
  const totalFailed = [...tallies.values()].reduce((n, t) => n + t.failed, 0);
  const out = [
    `Soak: ${CONNECTIONS} connections, ${(seconds / 60).toFixed(1)} min, ${totalSent} requests (${Math.round(totalSent / seconds)}/s), load average before ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    '',
    '| request | sent | req/s | p50 ms | p99 ms | failed |',
    '|---|---:|---:|---:|---:|---|',
    ...[...tallies].map(
      ([name, t]) =>
        `| ${name} | ${t.sent} | ${(t.sent / seconds).toFixed(1)} | ${percentile(t.latencies, 50).toFixed(1)} | ${percentile(t.latencies, 99).toFixed(1)} | ${t.failed}${t.failed ? ` (${[...t.failures].map(([k, n]) => `${n} × ${k}`).join(', ')})` : ''} |`,
    ),
    '',
    '| check | result |',
    '|---|---|',
    `| requests failed | ${totalFailed} of ${totalSent} ${totalFailed === 0 ? '✓' : '✗'} |`,
    `| resident memory | ${Math.round(afterFirstMinute.kib / 1024)} MiB after the first minute, ${Math.round(end.kib / 1024)} MiB at the end: ${(growth * 100).toFixed(1)} % ${growth < 0.1 ? '✓' : '✗'} (peak ${Math.round(Math.max(...rss.map((s) => s.kib)) / 1024)} MiB) |`,
    `| where, after the first minute | ${afterFirstMinute.memory ? describe(afterFirstMinute.memory, afterFirstMinute) : '?'} |`,
    `| where, at the end | ${lastMemory ? describe(lastMemory.memory!, lastMemory) : '?'} |`,
    `| resident memory, second half | ${Math.round((rss.find((x) => x.at - loadStarted >= (seconds * 1000) / 2) ?? end).kib / 1024)} MiB at half time, ${Math.round(end.kib / 1024)} MiB at the end |`,
    `| ledgers | ${ledgers.mismatches.length === 0 ? `every wallet and business account equals its ledger; ${ledgers.bookings} bookings ✓` : ledgers.mismatches.join('; ')} |`,
  ];
  console.log(out.join('\n'));
  if (totalFailed > 0 || growth >= 0.1 || ledgers.mismatches.length > 0) process.exitCode = 1;
}

runBench(main, progress);
