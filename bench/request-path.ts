// Request-path benchmark (issue 6, "Speed"): our server against the baselines it is measured by,
// each in its own process on loopback, loaded by autocannon from this process in interleaved
// rounds (round 1: every target once, round 2: every target again, …) so drift on a shared
// machine hits every target alike. Prints markdown tables; writes nothing into the repository.
//
//   npm run bench [-- --rounds 8 --seconds 4 --connections 50 --warmup 2 --statements-only --verbose]
//
// With DATABASE_URL it creates (and drops) a database `bench_request_<random>` on that server;
// without, it starts an embedded PostgreSQL under the system temp folder and removes it afterwards.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { migrate, openOrm } from '../src/db/orm.ts';
import { sha256Hex } from '../src/platform/crypto.ts';
import { openDatabase, withPort } from './database.ts';
import { onCleanup, runBench } from './lifecycle.ts';
import { seedBench, type BenchSeed } from './request-path/seed.ts';
import { startStatementProxy } from './request-path/statement-proxy.ts';
import { countStatements, issueSomePasses, type StatementCount } from './request-path/statements.ts';
import { startOurServer, startServer, stopServer, type Target } from './request-path/processes.ts';
import { flag } from './flags.ts';

const ROUNDS = flag('--rounds', 8);
const SECONDS = flag('--seconds', 4);
const CONNECTIONS = flag('--connections', 50);
const WARMUP_SECONDS = flag('--warmup', 2);
const STATEMENTS_ONLY = process.argv.includes('--statements-only');
const VERBOSE = process.argv.includes('--verbose');

const here = path.dirname(fileURLToPath(import.meta.url));
const progress = (message: string) => process.stderr.write(`${message}\n`);

/** One load: a request autocannon repeats against one target, and how to tell its answer is right. */
interface Load {
  name: string;
  target: () => Target;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** True when a single response is the right answer (10 passes, the type name), checked before loading. */
  check(status: number, body: unknown): boolean;
}

interface Measured {
  reqPerSec: number[];
  p99: number[];
  failures: number;
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

// ---- main -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadAverage(); // the machine is shared: say how busy it was
  const db = await openDatabase('request', progress);
  onCleanup(() => db.drop());

  progress('migrating and seeding …');
  const orm = await openOrm(db.url, 2);
  let seed: BenchSeed;
  try {
    await migrate(orm);
    seed = await seedBench(orm.em.fork(), new Date());
  } finally {
    await orm.close();
  }

  // SQL statements per request: a server of its own whose database connection goes through the counter.
  progress('counting SQL statements per request …');
  const dbAddress = new URL(db.url);
  const proxy = await startStatementProxy({ host: dbAddress.hostname, port: Number(dbAddress.port || 5432) });
  onCleanup(() => proxy.close());
  const counted = await startOurServer('our server (statement count)', withPort(db.url, proxy.port));
  const countedBase = `http://127.0.0.1:${counted.port}`;
  await issueSomePasses(countedBase, seed, 5);
  const statements = await countStatements(countedBase, proxy, seed);
  await stopServer(counted.child);
  await proxy.close();

  const out: string[] = [];
  out.push(...statementTable(statements));
  if (STATEMENTS_ONLY) {
    console.log(out.join('\n'));
    return;
  }

  progress('starting the targets …');
  const ours = await startOurServer('our server', db.url);
  // The same server on the dependencies' public APIs only (src/db/engine/README.md), measured beside it.
  const oursPlain = await startOurServer('our server, DB_ENGINE=plain', db.url, { DB_ENGINE: 'plain' });
  const yoga = await startServer('bare graphql-yoga', path.join(here, 'request-path/bare-yoga.ts'), [], {});
  const bare = await startServer('bare node:http + pg', path.join(here, 'request-path/bare-node-pg.ts'), [], {
    DATABASE_URL: db.url,
    BENCH_RESELLER_ID: seed.resellerId,
    BENCH_KEY_SHA256: sha256Hex(seed.apiKey),
  });
  const postgraphile = await startServer('PostGraphile', path.join(here, 'request-path/postgraphile.ts'), [], {
    DATABASE_URL: db.url,
    GRAPHILE_ENV: 'production',
  });
  const postgraphileKeyed = await startServer('PostGraphile + key lookup', path.join(here, 'request-path/postgraphile.ts'), [], {
    DATABASE_URL: db.url,
    GRAPHILE_ENV: 'production',
    BENCH_AUTH: 'true',
  });

  const auth = { Authorization: `Bearer ${seed.apiKey}` };
  const gqlHeaders = { 'Content-Type': 'application/json' };
  const query = (q: string) => JSON.stringify({ query: q });
  const pglQuery = `{ allPassPackages(first: 10, orderBy: PRIMARY_KEY_DESC, condition: { resellerId: "${seed.resellerId}" }) { edges { node { rowId name price } } } }`;
  const loads: Load[] = [
    {
      name: 'ours GraphQL `{ __typename }`',
      target: () => ours,
      method: 'POST',
      path: '/graphql',
      headers: { ...gqlHeaders, ...auth },
      body: query('{ __typename }'),
      check: (s, b) => s === 200 && at(b, 'data', '__typename') === 'Query',
    },
    {
      name: 'bare yoga `{ __typename }`',
      target: () => yoga,
      method: 'POST',
      path: '/graphql',
      headers: gqlHeaders,
      body: query('{ __typename }'),
      check: (s, b) => s === 200 && at(b, 'data', '__typename') === 'Query',
    },
    {
      name: 'ours GraphQL `passes(first: 10)`',
      target: () => ours,
      method: 'POST',
      path: '/graphql',
      headers: { ...gqlHeaders, ...auth },
      body: query('{ passes(first: 10) { edges { node { id name price } } } }'),
      check: (s, b) => s === 200 && lengthAt(b, 'data', 'passes', 'edges') === 10,
    },
    {
      name: 'ours REST GET /passes?limit=10',
      target: () => ours,
      method: 'GET',
      path: '/v3/api/business/reseller/passes?limit=10',
      headers: auth,
      check: (s, b) => s === 200 && lengthAt(b, 'data') === 10,
    },
    {
      name: 'bare node:http + pg GET /passes',
      target: () => bare,
      method: 'GET',
      path: '/passes?limit=10',
      headers: auth,
      check: (s, b) => s === 200 && lengthAt(b, 'data') === 10,
    },
    {
      name: 'ours, plain engine, GraphQL `passes(first: 10)`',
      target: () => oursPlain,
      method: 'POST',
      path: '/graphql',
      headers: { ...gqlHeaders, ...auth },
      body: query('{ passes(first: 10) { edges { node { id name price } } } }'),
      check: (s, b) => s === 200 && lengthAt(b, 'data', 'passes', 'edges') === 10,
    },
    {
      name: 'ours, plain engine, REST GET /passes?limit=10',
      target: () => oursPlain,
      method: 'GET',
      path: '/v3/api/business/reseller/passes?limit=10',
      headers: auth,
      check: (s, b) => s === 200 && lengthAt(b, 'data') === 10,
    },
    {
      name: 'PostGraphile `allPassPackages(first: 10)`',
      target: () => postgraphile,
      method: 'POST',
      path: '/graphql',
      headers: gqlHeaders,
      body: query(pglQuery),
      check: (s, b) => s === 200 && lengthAt(b, 'data', 'allPassPackages', 'edges') === 10,
    },
    {
      name: 'PostGraphile + API key lookup',
      target: () => postgraphileKeyed,
      method: 'POST',
      path: '/graphql',
      headers: { ...gqlHeaders, ...auth },
      body: query(pglQuery),
      check: (s, b) => s === 200 && lengthAt(b, 'data', 'allPassPackages', 'edges') === 10,
    },
  ];

  for (const load of loads) {
    const res = await fetch(urlOf(load), { method: load.method, headers: load.headers, body: load.body });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* keep the text for the message */
    }
    if (!load.check(res.status, body)) throw new Error(`${load.name} answered ${res.status} ${text.slice(0, 500)}`);
  }

  const measured = new Map<string, Measured>(loads.map((l) => [l.name, { reqPerSec: [], p99: [], failures: 0 }]));
  progress(`warming up (${WARMUP_SECONDS} s each) …`);
  for (const load of loads) await fire(load, WARMUP_SECONDS);
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts one target later, so no target always runs right after the same neighbour.
    const order = loads.map((_, i) => loads[(i + round) % loads.length]);
    for (const load of order) {
      const result = await fire(load, SECONDS);
      const m = measured.get(load.name)!;
      m.reqPerSec.push(result.requests.average);
      m.p99.push(result.latency.p99);
      m.failures += result.errors + result.timeouts + result.non2xx;
      progress(
        `round ${round + 1}/${ROUNDS}  ${load.name.padEnd(42)} ${int(result.requests.average).padStart(7)} req/s  p99 ${ms(result.latency.p99)}`,
      );
    }
  }

  out.push('', ...loadTables(loads, measured));
  out.push(
    '',
    `${ROUNDS} rounds × ${loads.length} targets × ${SECONDS} s at ${CONNECTIONS} connections (after ${WARMUP_SECONDS} s of warm-up each); ` +
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}; ` +
      `load average ${loadBefore} before, ${loadAverage()} after; ${Math.round((Date.now() - started) / 1000)} s in all.`,
  );
  console.log(out.join('\n'));
}

/** The value under `keys` in a parsed JSON response, if the path exists. */
const at = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);
const lengthAt = (value: unknown, ...keys: string[]) => {
  const list = at(value, ...keys);
  return Array.isArray(list) ? list.length : undefined;
};

function urlOf(load: Load): string {
  return `http://127.0.0.1:${load.target().port}${load.path}`;
}

function fire(load: Load, seconds: number): Promise<Result> {
  return autocannon({
    url: urlOf(load),
    method: load.method,
    headers: load.headers,
    body: load.body,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
}

function statementTable(counts: StatementCount[]): string[] {
  const lines = [
    '### SQL statements per request (counted at the wire, median of 3 after a warm-up)',
    '',
    '| request | statements | goal | |',
    '|---|---:|---:|---|',
    ...counts.map((c) => {
      const goal = c.goal === null ? '—' : c.goal <= 1 ? String(c.goal) : `≤ ${c.goal}`;
      return `| ${c.request} | ${c.statements}${c.spread.length ? ` (${c.spread.join(', ')})` : ''} | ${goal} | ${c.goal === null ? '' : met(c.statements <= c.goal)} |`;
    }),
  ];
  const byRequest = new Map(counts.map((c) => [c.request, c.statements]));
  const pairs = [
    ['GET /passes?limit=10', 'GET /passes?limit=100 (20 rows)'],
    ['GraphQL `passes(first: 10) { id name price }`', 'GraphQL `passes(first: 100) { id name price }` (20 rows)'],
  ];
  const constant = pairs.every(([a, b]) => byRequest.get(a) === byRequest.get(b));
  lines.push('', `Constant in page size (10 vs 20 rows, REST and GraphQL): ${constant ? 'yes' : '**no**'}.`);
  if (VERBOSE) {
    for (const c of counts) {
      lines.push('', `${c.request}:`, '```sql', ...c.sql.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 160)), '```');
    }
  }
  return lines;
}

function loadTables(loads: Load[], measured: Map<string, Measured>): string[] {
  const m = (name: string) => measured.get(name)!;
  const lines = [
    `### Throughput and latency (${CONNECTIONS} connections; median over ${ROUNDS} rounds)`,
    '',
    '| target | req/s | per round | p99 | failed requests |',
    '|---|---:|---|---:|---:|',
    ...loads.map((l) => {
      const r = m(l.name);
      return `| ${l.name} | ${int(median(r.reqPerSec))} | ${r.reqPerSec.map(int).join(' · ')} | ${ms(median(r.p99))} | ${r.failures} |`;
    }),
  ];
  const ratio = (label: string, a: string, b: string, goal: number | null) => {
    const ra = m(a).reqPerSec;
    const rb = m(b).reqPerSec;
    // Paired by round: both sides ran within the same half minute, under much the same background load.
    const perRound = ra.map((v, i) => v / rb[i]);
    const value = median(perRound);
    return `| ${label} | ${x(value)} | ${x(Math.min(...perRound))}–${x(Math.max(...perRound))} | ${goal === null ? '—' : `≥ ${goal}`} | ${goal === null ? '' : met(value >= goal)} |`;
  };
  const [oursTypename, yogaTypename, oursPasses, oursRest, barePasses, plainPasses, plainRest, pgl, pglKeyed] = loads.map((l) => l.name);
  lines.push(
    '',
    '### Ratios (req/s; the median of the ratio taken within each round, and its range)',
    '',
    '| ratio | value | per-round range | goal | |',
    '|---|---:|---|---:|---|',
    ratio('ours `{ __typename }` / bare yoga `{ __typename }`', oursTypename, yogaTypename, 0.7),
    ratio('ours `passes(first: 10)` / ours `{ __typename }`', oursPasses, oursTypename, 0.5),
    ratio('ours REST GET /passes / bare node:http + pg', oursRest, barePasses, 0.5),
    ratio('ours `passes(first: 10)` / PostGraphile', oursPasses, pgl, 1.0),
    ratio('ours `passes(first: 10)` / PostGraphile + key lookup', oursPasses, pglKeyed, null),
    ratio('plain engine `passes(first: 10)` / PostGraphile', plainPasses, pgl, null),
    ratio('plain engine REST GET /passes / bare node:http + pg', plainRest, barePasses, null),
    ratio('tuned engine / plain engine, `passes(first: 10)`', oursPasses, plainPasses, null),
    ratio('tuned engine / plain engine, REST GET /passes', oursRest, plainRest, null),
    '',
    `### p99 latency at ${CONNECTIONS} connections (median over rounds)`,
    '',
    '| request | p99 | goal | |',
    '|---|---:|---:|---|',
    ...[oursTypename, oursPasses, oursRest].map((name) => {
      const p99 = median(m(name).p99);
      return `| ${name} | ${ms(p99)} | < 50 ms | ${CONNECTIONS === 50 ? met(p99 < 50) : '(goal is at 50 connections)'} |`;
    }),
  );
  return lines;
}

runBench(main, progress);
