// Frontend-query benchmark (issue 32, "Speed"; bench/README.md "Frontend query"): the one request a
// partner frontend's "my bookings" screen sends — a client, its bookings (first: 10) with each
// booking's provider, its current pass with the pass's categories (bench/frontend-query/documents.ts)
// — on our /graphql against PostGraphile 5 answering the same shape over the same database, each
// in its own process on loopback, loaded by autocannon from this process in interleaved rounds
// (the order turns by one each round) so drift on a shared machine hits both alike. Also the SQL
// statements per request of each, at the wire, for first: 1, 10 and 50. Prints markdown tables;
// writes nothing into the repository.
//
//   npm run bench:frontend [-- --rounds 8 --seconds 4 --connections 50 --warmup 2 --clients 300 --statements-only --verbose]
//
// With DATABASE_URL it creates (and drops) a database `bench_frontend_<random>` on that server;
// without, it starts an embedded PostgreSQL under the system temp folder and removes it afterwards.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { withPort } from './database.ts';
import { onCleanup, runBench } from './lifecycle.ts';
import { INSTANCES, inParallel, openBookingsWorld, type BookingsSeed } from './bookings/seed.ts';
import { startStatementProxy, type StatementProxy } from './request-path/statement-proxy.ts';
import { sleep, startOurServer, startServer, stopServer, type Target } from './request-path/processes.ts';
import { OURS, POSTGRAPHILE } from './frontend-query/documents.ts';
import { flag } from './flags.ts';
import { CpuMeter } from './bookings/cpu.ts';

const ROUNDS = flag('--rounds', 8);
const SECONDS = flag('--seconds', 4);
const CONNECTIONS = flag('--connections', 50);
const WARMUP_SECONDS = flag('--warmup', 2);
/** Clients holding the pass, each with BOOKINGS_EACH bookings; the measured client has MEASURED_BOOKINGS. */
const CLIENT_COUNT = flag('--clients', 300);
const STATEMENTS_ONLY = process.argv.includes('--statements-only');
const VERBOSE = process.argv.includes('--verbose');

const BOOKINGS_EACH = 12;
const MEASURED_BOOKINGS = 60; // more than the largest page counted (50)
const PAGE = 10; // what the screen asks for under load
const PAGE_SIZES = [1, 10, 50];

const here = path.dirname(fileURLToPath(import.meta.url));
const startedAt = Date.now();
const progress = (message: string) =>
  process.stderr.write(`[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(3)} s] ${message}\n`);

/**
 * The token our server is called with, as a frontend holds it: a client session for the measured
 * client (`POST /client_sessions`, docs/partner-guide.md "Client sessions"), made by the reseller's
 * server with its API key, for the longest time a session lives (the whole run fits in it).
 */
async function clientSessionToken(base: string, seed: BookingsSeed, clientId: string): Promise<string> {
  const res = await fetch(`${base}/v3/api/business/reseller/client_sessions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${seed.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_id: clientId, expires_in: 3600 }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 201 || !body.token) throw new Error(`creating the client session failed: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

// ---- the world --------------------------------------------------------------------------------

/**
 * Clients and their bookings, made over HTTP as a reseller makes them: CLIENT_COUNT clients holding
 * the bookings world's unlimited pass (bench/bookings/seed.ts), each booked into BOOKINGS_EACH class
 * instances (consecutive instances: each at another of the 20 gyms), the first into MEASURED_BOOKINGS.
 */
async function seedClients(base: string, seed: BookingsSeed): Promise<string[]> {
  const headers = { Authorization: `Bearer ${seed.apiKey}`, 'Content-Type': 'application/json' };
  const post = async (path: string, body: object) => {
    const res = await fetch(`${base}/v3/api/business/reseller${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const answer = (await res.json()) as Record<string, string>;
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const clients: string[] = new Array(CLIENT_COUNT);
  progress(`issuing the pass to ${CLIENT_COUNT} clients over HTTP …`);
  await inParallel(CLIENT_COUNT, 8, async (i) => {
    const issued = await post('/issued_passes', {
      pass_id: seed.passId,
      first_name: 'Frontend',
      last_name: `Client ${i}`,
      email: `frontend+${i}@example.com`,
    });
    clients[i] = issued.client_id;
  });
  const bookings: { client: string; instance: string }[] = [];
  clients.forEach((client, c) => {
    const count = c === 0 ? MEASURED_BOOKINGS : BOOKINGS_EACH;
    for (let j = 0; j < count; j++) bookings.push({ client, instance: seed.instances[(c * BOOKINGS_EACH + j) % INSTANCES] });
  });
  progress(`booking ${bookings.length} classes over HTTP …`);
  await inParallel(bookings.length, 8, async (k) => {
    await post('/bookings/class', { class_instance_id: bookings[k].instance, client_id: bookings[k].client });
  });
  return clients;
}

// ---- requests ---------------------------------------------------------------------------------

interface Side {
  name: string;
  document: string;
  headers: Record<string, string>;
  /** The request body for `first` bookings of the measured client. */
  body(first: number): string;
  /** The number of bookings in a right answer, or a reason it is wrong. */
  check(status: number, body: unknown, first: number): string | undefined;
}

/** The value under `keys` in a parsed JSON response, if the path exists. */
const at = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);

function sides(seed: BookingsSeed, clientId: string, token: string): [Side, Side] {
  const json = { 'Content-Type': 'application/json' };
  const body = (document: string) => (first: number) => JSON.stringify({ query: document, variables: { clientId, first } });
  /** Right: `first` edges, each booking's provider named, the pass's categories present. */
  const check =
    (edgesAt: string[], providerOf: (node: unknown) => unknown, categoriesAt: string[]) =>
    (status: number, answer: unknown, first: number) => {
      if (status !== 200 || at(answer, 'errors')) return `answered ${status}`;
      const edges = at(answer, ...edgesAt);
      if (!Array.isArray(edges) || edges.length !== first) return `not ${first} bookings`;
      if (!edges.every((e) => typeof at(providerOf(at(e, 'node')), 'name') === 'string')) return 'a booking without its provider';
      const categories = at(answer, ...categoriesAt);
      if (!Array.isArray(categories) || categories.length === 0) return 'no pass categories';
      return undefined;
    };
  return [
    {
      name: 'ours',
      document: OURS,
      headers: { ...json, Authorization: `Bearer ${token}` },
      body: body(OURS),
      check: check(['data', 'client', 'bookings', 'edges'], (n) => at(n, 'provider'), ['data', 'issuedPass', 'categories']),
    },
    {
      name: 'PostGraphile + key lookup',
      document: POSTGRAPHILE,
      headers: { ...json, Authorization: `Bearer ${seed.apiKey}` },
      body: body(POSTGRAPHILE),
      check: check(['data', 'clientByRowId', 'bookingsByClientId', 'edges'], (n) => at(n, 'providerByProviderId'), [
        'data',
        'clientByRowId',
        'issuedPassesByClientId',
        'nodes',
        '0',
        'passPackageByPassId',
        'categories',
      ]),
    },
  ];
}

async function send(port: number, side: Side, first: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: side.headers, body: side.body(first) });
  const text = await res.text();
  let answer: unknown = text;
  try {
    answer = JSON.parse(text);
  } catch {
    /* keep the text for the message */
  }
  const wrong = side.check(res.status, answer, first);
  if (wrong) throw new Error(`${side.name}, first: ${first}: ${wrong}: ${text.slice(0, 500)}`);
}

// ---- statements per request --------------------------------------------------------------------

interface Count {
  first: number;
  statements: number;
  spread: number[];
  sql: string[];
}

/**
 * Each page size once to warm up (plans, caches), then three times, one at a time: the fewest. A
 * once-a-second cache's refresh (ours: the reseller's trusted-documents setting) falls in some runs
 * and belongs to no request; a statement the request needs is in every run.
 */
async function countStatements(port: number, proxy: StatementProxy, side: Side): Promise<Count[]> {
  const counts: Count[] = [];
  for (const first of PAGE_SIZES) {
    const runs: string[][] = [];
    for (let i = 0; i < 4; i++) {
      await sleep(50); // let anything the previous request left running finish outside the window
      const from = proxy.statements.length;
      await send(port, side, first);
      await sleep(50);
      if (i > 0) runs.push(proxy.statements.slice(from));
    }
    const fewest = [...runs].sort((a, b) => a.length - b.length)[0];
    const lengths = runs.map((r) => r.length);
    counts.push({ first, statements: fewest.length, spread: new Set(lengths).size > 1 ? lengths : [], sql: fewest });
  }
  return counts;
}

// ---- statistics and tables --------------------------------------------------------------------

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
const x = (n: number) => n.toFixed(2);
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join('/');
const met = (ok: boolean) => (ok ? 'met' : '**not met**');

function statementTable(counted: { side: Side; counts: Count[] }[]): string[] {
  const lines = [
    '### SQL statements per request (counted at the wire, the fewest of 3 after a warm-up)',
    '',
    `| server | ${PAGE_SIZES.map((f) => `first: ${f}`).join(' | ')} | constant in the page size |`,
    `|---|${PAGE_SIZES.map(() => '---:').join('|')}|---|`,
    ...counted.map(({ side, counts }) => {
      const cells = counts.map((c) => `${c.statements}${c.spread.length ? ` (${c.spread.join(', ')})` : ''}`);
      return `| ${side.name} | ${cells.join(' | ')} | ${new Set(counts.map((c) => c.statements)).size === 1 ? 'yes' : '**no**'} |`;
    }),
  ];
  if (VERBOSE)
    for (const { side, counts } of counted)
      for (const c of counts)
        lines.push(
          '',
          `${side.name}, first: ${c.first}:`,
          '```sql',
          ...c.sql.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 160)),
          '```',
        );
  return lines;
}

// ---- main -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const loadBefore = loadAverage(); // the machine is shared: say how busy it was
  const { db, seed } = await openBookingsWorld('frontend', progress);

  // SQL statements per request: servers of their own whose database connection goes through the counter.
  const dbAddress = new URL(db.url);
  const proxy = await startStatementProxy({ host: dbAddress.hostname, port: Number(dbAddress.port || 5432) });
  onCleanup(() => proxy.close());
  const countedOurs = await startOurServer('our server (statement count)', withPort(db.url, proxy.port));
  const clients = await seedClients(`http://127.0.0.1:${countedOurs.port}`, seed);
  const token = await clientSessionToken(`http://127.0.0.1:${countedOurs.port}`, seed, clients[0]);
  const [ours, postgraphile] = sides(seed, clients[0], token);
  progress('counting SQL statements per request …');
  const oursCounts = await countStatements(countedOurs.port, proxy, ours);
  await stopServer(countedOurs.child);
  const countedPgl = await startPostGraphile('PostGraphile (statement count)', withPort(db.url, proxy.port));
  const pglCounts = await countStatements(countedPgl.port, proxy, postgraphile);
  await stopServer(countedPgl.child);
  await proxy.close();

  const out = statementTable([
    { side: ours, counts: oursCounts },
    { side: postgraphile, counts: pglCounts },
  ]);
  if (STATEMENTS_ONLY) {
    console.log(out.join('\n'));
    return;
  }

  progress('starting the targets …');
  const targets: { side: Side; target: Target }[] = [
    { side: ours, target: await startOurServer('our server', db.url) },
    { side: postgraphile, target: await startPostGraphile('PostGraphile + key lookup', db.url) },
  ];
  for (const { side, target } of targets) await send(target.port, side, PAGE);

  const measured = new Map(
    targets.map(({ side }) => [
      side.name,
      { reqPerSec: [] as number[], p99: [] as number[], serverMs: [] as number[], databaseMs: [] as number[], failures: 0 },
    ]),
  );
  // CPU per request of each server process and of the PostgreSQL backends it drives: where a
  // request's cost is, whatever else the shared machine runs (docs/adr/0001).
  const meter = new CpuMeter(db.url);
  await meter.open();
  onCleanup(() => meter.close());
  progress(`warming up (${WARMUP_SECONDS} s each) …`);
  for (const t of targets) await fire(t, WARMUP_SECONDS);
  for (let round = 0; round < ROUNDS; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const t of order) {
      const before = await meter.snapshot(t.target.child.pid);
      const result = await fire(t, SECONDS);
      const spent = CpuMeter.spent(before, await meter.snapshot(t.target.child.pid));
      const m = measured.get(t.side.name)!;
      m.reqPerSec.push(result.requests.average);
      if (spent) m.serverMs.push(spent.serverMs / result['2xx']);
      if (spent) m.databaseMs.push(spent.databaseMs / result['2xx']);
      m.p99.push(result.latency.p99);
      m.failures += result.errors + result.timeouts + result.non2xx;
      progress(
        `round ${round + 1}/${ROUNDS}  ${t.side.name.padEnd(26)} ${int(result.requests.average).padStart(7)} req/s  p99 ${ms(result.latency.p99)}`,
      );
    }
  }

  const oursM = measured.get(ours.name)!;
  const pglM = measured.get(postgraphile.name)!;
  // Paired by round: both sides ran within the same few seconds, under much the same background load.
  const perRound = oursM.reqPerSec.map((v, i) => v / pglM.reqPerSec[i]);
  const ratio = median(perRound);
  const statementsAt = (counts: Count[]) => counts.find((c) => c.first === PAGE)!.statements;
  out.push(
    '',
    `### The "my bookings" query, first: ${PAGE} (${CONNECTIONS} connections; median over ${ROUNDS} rounds)`,
    '',
    '| server | req/s | per round | p99 | CPU ms per request: server · PostgreSQL | statements per request | failed requests |',
    '|---|---:|---|---:|---:|---:|---:|',
    ...[
      { side: ours, m: oursM, counts: oursCounts },
      { side: postgraphile, m: pglM, counts: pglCounts },
    ].map(
      ({ side, m, counts }) =>
        `| ${side.name} | ${int(median(m.reqPerSec))} | ${m.reqPerSec.map(int).join(' · ')} | ${ms(median(m.p99))} | ${cpuCell(m)} | ${statementsAt(counts)} | ${m.failures} |`,
    ),
    '',
    '| ratio (req/s, the median of the ratio taken within each round) | value | per-round range | goal | |',
    '|---|---:|---|---:|---|',
    `| ours / PostGraphile + key lookup | ${x(ratio)} | ${x(Math.min(...perRound))}–${x(Math.max(...perRound))} | ≥ 1.0 | ${met(ratio >= 1)} |`,
    '',
    `${ROUNDS} rounds × 2 targets × ${SECONDS} s at ${CONNECTIONS} connections (after ${WARMUP_SECONDS} s of warm-up each); ` +
      `${CLIENT_COUNT} clients, the measured one with ${MEASURED_BOOKINGS} bookings at 20 gyms; ours called with a client-session token, PostGraphile with the API key; ` +
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}; ` +
      `load average ${loadBefore} before, ${loadAverage()} after; ${Math.round((Date.now() - startedAt) / 1000)} s in all.`,
  );
  console.log(out.join('\n'));
}

/** The medians of the rounds' CPU per request, or why there are none (a database elsewhere, no /proc). */
const cpuCell = (m: { serverMs: number[]; databaseMs: number[] }) =>
  m.serverMs.length ? `${median(m.serverMs).toFixed(2)} · ${median(m.databaseMs).toFixed(2)}` : 'not readable';

const startPostGraphile = (name: string, databaseUrl: string) =>
  startServer(name, path.join(here, 'frontend-query/postgraphile.ts'), [], { DATABASE_URL: databaseUrl, GRAPHILE_ENV: 'production' });

function fire({ side, target }: { side: Side; target: Target }, seconds: number): Promise<Result> {
  return autocannon({
    url: `http://127.0.0.1:${target.port}/graphql`,
    method: 'POST',
    headers: side.headers,
    body: side.body(PAGE),
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
}

runBench(main, progress);
