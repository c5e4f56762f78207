// Bookings benchmark (bench/README.md "Bookings"): the three booking writes — a covered class
// booking, a covered spa booking, a spa co-pay confirm — on our `serve` process against a bare
// node:http + pg handler issuing the same statements, each in its own process on loopback, loaded
// by autocannon from this process in interleaved rounds (the order turns by one each round), so
// drift on a shared machine hits both sides alike. Also the SQL statements per request (at the
// wire, with and without an Idempotency-Key, on an empty and on a full class instance / spa day),
// and the latency of each load as an open loop at half our saturated rate (--paced-share).
// Prints markdown tables; writes nothing into the repository.
//
//   node bench/bookings.ts [--rounds 6 --seconds 4 --connections 20 --warmup 2 --fill 1000 --paced-share 0.5
//                           --no-idempotency-key --statements-only --verbose --cpu-prof DIR --kinds class,spa,confirm]
//
// With DATABASE_URL it creates (and drops) a database `bench_bookings_<random>` on that server;
// without, it starts an embedded PostgreSQL under the system temp folder and removes it afterwards.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Result } from 'autocannon';
import { sha256Hex } from '../src/platform/crypto.ts';
import { startStatementProxy } from './request-path/statement-proxy.ts';
import { startOurServer, startServer, stopServer } from './request-path/processes.ts';
import { withPort } from './database.ts';
import { onCleanup, runBench } from './lifecycle.ts';
import { CLIENTS, issueClients, openBookingsWorld, type BookingsSeed } from './bookings/seed.ts';
import { BARE_UNITS, OURS_UNITS, countStatements, openCountSession, openSessionsAhead, type KindCount } from './bookings/statements.ts';
import { Counters, SessionPool, failuresOf, fire, firePaced, openSessions, type Load, type Paced } from './bookings/load.ts';
import { CpuMeter } from './bookings/cpu.ts';
import { checkLedgers } from './bookings/ledgers.ts';
import { confirmation, expectSuccess, loadClass, loadSpa, type Kind } from './bookings/requests.ts';
import { flag } from './flags.ts';

const ROUNDS = flag('--rounds', 6);
const SECONDS = flag('--seconds', 4);
const CONNECTIONS = flag('--connections', 20);
const WARMUP_SECONDS = flag('--warmup', 2);
const FILL = flag('--fill', 1000);
const POOL = flag('--pool', 10); // database connections of each server (our DB_POOL_MAX, 10 by default)
const PACED_SHARE = flag('--paced-share', 0.5);
const IDEMPOTENCY_KEY = !process.argv.includes('--no-idempotency-key');
const STATEMENTS_ONLY = process.argv.includes('--statements-only');
const CPU_PROFILE_DIR = process.argv.includes('--cpu-prof') ? process.argv[process.argv.indexOf('--cpu-prof') + 1] : undefined;
if (process.argv.includes('--cpu-prof') && !CPU_PROFILE_DIR) throw new Error('--cpu-prof takes a folder');
const VERBOSE = process.argv.includes('--verbose');
/** The loads to run (all three by default); the statement count always covers all three. */
const KINDS = (process.argv.includes('--kinds') ? (process.argv[process.argv.indexOf('--kinds') + 1] ?? '') : 'class,spa,confirm').split(
  ',',
);
if (KINDS.some((k) => !['class', 'spa', 'confirm'].includes(k)))
  throw new Error('--kinds takes class, spa and confirm, separated by commas');
// A class instance gets one booking per client: the fill and the six counted bookings need as many clients.
if (FILL + 5 > CLIENTS || FILL < 3) throw new Error(`--fill takes 3 … ${CLIENTS - 5}`);

const here = path.dirname(fileURLToPath(import.meta.url));
const startedAt = Date.now();
const progress = (message: string) =>
  process.stderr.write(`[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(3)} s] ${message}\n`);

const REQUESTS: Record<Kind, string> = {
  class: 'POST /bookings/class (covered, 201 PENDING)',
  spa: 'POST /bookings/spa (covered, credits debited)',
  confirm: 'POST /bookings/spa/{session_id}/confirm (co-pay)',
};

// ---- servers ----------------------------------------------------------------------------------

/** Our server as deployed (with --cpu-prof DIR: profiled). */
const startOurs = (name: string, databaseUrl: string, profile = false, engine: 'tuned' | 'plain' = 'tuned') =>
  startOurServer(name, databaseUrl, {
    DB_POOL_MAX: String(POOL),
    DB_ENGINE: engine,
    ...(profile && CPU_PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.resolve(CPU_PROFILE_DIR)}` } : {}),
  });
const startBare = (name: string, databaseUrl: string, seed: BookingsSeed) =>
  startServer(name, path.join(here, 'bookings/bare-node-pg.ts'), [], {
    DATABASE_URL: databaseUrl,
    BENCH_POOL_MAX: String(POOL),
    BENCH_RESELLER_ID: seed.resellerId,
    BENCH_KEY_SHA256: sha256Hex(seed.apiKey),
    BENCH_CURRENCY: seed.currency,
  });

// ---- statistics and tables --------------------------------------------------------------------

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
const x = (n: number) => n.toFixed(2);
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join('/');
const met = (ok: boolean) => (ok ? 'met' : '**not met**');
const ordinal = (n: number) =>
  `${n.toLocaleString('en-US')}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

interface Measured {
  reqPerSec: number[];
  p99: number[];
  non2xx: number;
  errors: number;
  requests: number;
  /** CPU ms over the measured rounds: server process, PostgreSQL backends (undefined: not readable), the load generator (this process). */
  serverMs: number | undefined;
  databaseMs: number | undefined;
  generatorMs: number;
}

// ---- main -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadAverage(); // the machine is shared: say how busy it was
  const { db, seed } = await openBookingsWorld('bookings', progress);

  // SQL statements per request: servers of their own whose database connection goes through the counter.
  const dbAddress = new URL(db.url);
  const proxy = await startStatementProxy({ host: dbAddress.hostname, port: Number(dbAddress.port || 5432) });
  onCleanup(() => proxy.close());
  const counted = await startOurs('our server (statement count)', withPort(db.url, proxy.port));
  const countedBase = `http://127.0.0.1:${counted.port}`;
  progress(`issuing the pass to ${CLIENTS} clients over HTTP …`);
  await issueClients(countedBase, seed);
  progress('counting SQL statements per request (ours) …');
  const open = openCountSession(countedBase, seed);
  const ours = await countStatements(countedBase, proxy, seed, open, OURS_UNITS, FILL, progress);
  const openedAhead = await openSessionsAhead(open, BARE_UNITS);
  await stopServer(counted.child);
  progress('counting SQL statements per request (bare handler) …');
  const bareCounted = await startBare('bare node:http + pg (statement count)', withPort(db.url, proxy.port), seed);
  const bare = await countStatements(`http://127.0.0.1:${bareCounted.port}`, proxy, seed, openedAhead, BARE_UNITS, undefined, progress);
  await stopServer(bareCounted.child);
  await proxy.close();

  const out = statementTable(ours, bare);
  if (STATEMENTS_ONLY) {
    console.log(out.join('\n'));
    return;
  }

  progress('starting the targets …');
  const oursTarget = await startOurs('our server', db.url, true);
  const bareTarget = await startBare('bare node:http + pg', db.url, seed);
  // The same server on the dependencies' public APIs only, measured beside it (src/db/engine/README.md).
  const plainTarget = await startOurs('our server, DB_ENGINE=plain', db.url, false, 'plain');
  const target = { ours: () => oursTarget, plain: () => plainTarget, bare: () => bareTarget };
  const sideNames = { ours: 'ours', plain: 'ours, plain engine,', bare: 'bare node:http + pg' };
  const loads: Load[] = (['class', 'spa', 'confirm'] as const)
    .filter((k) => KINDS.includes(k))
    .flatMap((kind) =>
      (['ours', 'plain', 'bare'] as const).map((side) => ({
        name: `${sideNames[side]} ${kind === 'confirm' ? 'confirm' : kind}`,
        kind,
        side,
        target: target[side],
      })),
    );

  const counters = new Counters();
  const sessions = new SessionPool();
  let sessionSeconds = 0;
  let sessionFailures = 0;
  // Sessions for the next confirm load: twice what the fastest confirm load so far would use, and
  // 100 more (a quiet minute on this shared host has run a confirm load 1.6 times faster than the one before).
  let confirmRate = 1_500; // above any confirm rate seen here, so the warm-up does not run out either
  const topUp = async (seconds: number) => {
    const need = Math.ceil(confirmRate * seconds * 2) + 100;
    if (sessions.available >= need) return;
    const opened = await openSessions(oursTarget, seed, counters, sessions, need - sessions.available, CONNECTIONS);
    sessionSeconds += opened.seconds;
    sessionFailures += opened.failed;
  };

  // Each request checked once on both targets (a 201 of the right kind), with a key when the load sends them.
  await topUp(1);
  for (const load of loads) {
    const base = `http://127.0.0.1:${load.target().port}`;
    const key = IDEMPOTENCY_KEY ? `bench-check-${load.side}-${load.kind}` : undefined;
    if (load.kind === 'class') await expectSuccess('class', base, seed, loadClass(seed, counters.class++), key);
    else if (load.kind === 'spa') await expectSuccess('spa', base, seed, loadSpa(seed, counters.spa++), key);
    else await expectSuccess('confirm', base, seed, confirmation(sessions.take()!), key);
  }

  const measured = new Map<string, Measured>(
    loads.map((l) => [
      l.name,
      {
        reqPerSec: [],
        p99: [],
        non2xx: 0,
        errors: 0,
        requests: 0,
        serverMs: 0,
        databaseMs: 0,
        generatorMs: 0,
      },
    ]),
  );
  const meter = new CpuMeter(db.url);
  await meter.open();
  onCleanup(() => meter.close());
  const shoot = async (load: Load, seconds: number): Promise<Result> => {
    if (load.kind === 'confirm') await topUp(seconds);
    const result = await fire(load, seed, counters, sessions, { seconds, connections: CONNECTIONS, idempotencyKey: IDEMPOTENCY_KEY });
    if (load.kind === 'confirm') confirmRate = Math.max(confirmRate, result.requests.average);
    return result;
  };
  progress(`warming up (${WARMUP_SECONDS} s each) …`);
  for (const load of loads) await shoot(load, WARMUP_SECONDS);
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts one target later, so no target always runs right after the same neighbour.
    const order = loads.map((_, i) => loads[(i + round) % loads.length]);
    for (const load of order) {
      if (load.kind === 'confirm') await topUp(SECONDS); // before the CPU snapshot: opening sessions is not the confirm's work
      const before = await meter.snapshot(load.target().child.pid);
      const generator = process.cpuUsage();
      const result = await shoot(load, SECONDS);
      const generatorUs = process.cpuUsage(generator);
      const spent = CpuMeter.spent(before, await meter.snapshot(load.target().child.pid));
      const m = measured.get(load.name)!;
      m.generatorMs += (generatorUs.user + generatorUs.system) / 1000;
      m.serverMs = spent && m.serverMs !== undefined ? m.serverMs + spent.serverMs : undefined;
      m.databaseMs = spent && m.databaseMs !== undefined ? m.databaseMs + spent.databaseMs : undefined;
      m.reqPerSec.push(result.requests.average);
      m.p99.push(result.latency.p99);
      m.non2xx += result.non2xx;
      m.errors += result.errors + result.timeouts;
      m.requests += result['2xx'] + result.non2xx;
      progress(
        `round ${round + 1}/${ROUNDS}  ${load.name.padEnd(30)} ${int(result.requests.average).padStart(6)} req/s  p99 ${ms(result.latency.p99)}` +
          `${result.non2xx + result.errors + result.timeouts ? `  FAILED ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts` : ''}`,
      );
    }
  }

  // The same loads as an open loop at a rate both sides sustain (a share of what ours did in the
  // rounds, the same for both): the tail without the queue.
  const paced = new Map<string, Paced & { rate: number }>();
  for (const load of loads) {
    const rate = Math.max(
      1,
      Math.round(PACED_SHARE * median(measured.get(loads.find((l) => l.kind === load.kind && l.side === 'ours')!.name)!.reqPerSec)),
    );
    if (load.kind === 'confirm') await topUp(SECONDS * 2);
    const result = await firePaced(load, seed, counters, sessions, {
      rate,
      seconds: SECONDS * 2,
      connections: CONNECTIONS,
      idempotencyKey: IDEMPOTENCY_KEY,
    });
    paced.set(load.name, { ...result, rate });
    progress(
      `paced ${rate} req/s  ${load.name.padEnd(30)} p99 ${ms(percentile(result.latencies, 0.99))}, generator stall ${ms(result.generatorStallMs)}${result.failed ? `  FAILED ${failuresOf(result)}` : ''}`,
    );
  }

  out.push('', ...loadTables(loads, measured), '', ...pacedTable(loads, paced));
  const ledgers = await checkLedgers(db.url);
  out.push(
    '',
    `${ROUNDS} rounds × ${loads.length} loads × ${SECONDS} s at ${CONNECTIONS} connections (after ${WARMUP_SECONDS} s of warm-up each), ` +
      `${IDEMPOTENCY_KEY ? 'each request with its own Idempotency-Key' : 'no Idempotency-Key'}; ${int(sessions.opened)} co-pay sessions opened ` +
      `through our API for the confirms (${Math.round(sessionSeconds)} s, ${sessionFailures} failed${sessions.ranOut ? `, ${sessions.ranOut} confirms found none left` : ''}); ` +
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}; ` +
      `load average ${loadBefore} before, ${loadAverage()} after; ${Math.round((Date.now() - started) / 1000)} s in all. ` +
      `Afterwards (${int(ledgers.bookings)} bookings): ${ledgers.mismatches.length ? `**${ledgers.mismatches.join('; ')}**` : "every wallet, the business account, every class instance's spots and every pass's visit counter equal their ledgers"}.`,
  );
  console.log(out.join('\n'));
}

function pacedTable(loads: Load[], paced: Map<string, Paced & { rate: number }>): string[] {
  return [
    `### Latency paced at ${PACED_SHARE} × our req/s above, evenly spaced (at most ${CONNECTIONS} connections; from each request's due time; ${SECONDS * 2} s each)`,
    '',
    "| target | req/s offered | p50 | p99 | max | requests | not 201 | the load generator's longest stall |",
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...loads.map((l) => {
      const r = paced.get(l.name)!;
      return `| ${l.name} | ${int(r.rate)} | ${ms(percentile(r.latencies, 0.5))} | ${ms(percentile(r.latencies, 0.99))} | ${ms(Math.max(...r.latencies))} | ${int(r.latencies.length)} | ${failuresOf(r)} | ${ms(r.generatorStallMs)} |`;
    }),
  ];
}

function statementTable(ours: KindCount[], bare: KindCount[]): string[] {
  const trips = (c: { roundTrips: number; exchanges: number }) => `${c.roundTrips} (${c.exchanges})`;
  const show = (c: { statements: number; spread: number[] } | undefined) =>
    c ? `${c.statements}${c.spread.length ? ` (${c.spread.join(', ')})` : ''}` : '—';
  const lines = [
    '### SQL statements per request (counted at the wire, BEGIN/SAVEPOINT/COMMIT included; median of 3), and the round trips and exchanges they take',
    '',
    `| request | Idempotency-Key | ours, 1st booking of its instance / day | ours, ${ordinal(FILL)}–${ordinal(FILL + 5)} | bare handler, 1st | constant | round trips (exchanges), ours / bare, 1st |`,
    '|---|---|---:|---:|---:|---|---:|',
    ...ours.map((c) => {
      const b = bare.find((o) => o.kind === c.kind && o.key === c.key);
      const constant = c.full ? c.full.statements === c.first.statements : undefined;
      return `| ${REQUESTS[c.kind]} | ${c.key ? 'yes' : 'no'} | ${show(c.first)} | ${show(c.full)} | ${show(b?.first)} | ${constant === undefined ? '' : constant ? 'yes' : '**no**'} | ${trips(c.first)} / ${b ? trips(b.first) : '—'} |`;
    }),
  ];
  if (VERBOSE) {
    for (const [side, counts] of [
      ['ours', ours],
      ['bare handler', bare],
    ] as const) {
      for (const c of counts) {
        lines.push(
          '',
          `${side}, ${REQUESTS[c.kind]}, ${c.key ? 'with' : 'without'} an Idempotency-Key, 1st:`,
          '```sql',
          ...c.first.sql.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 160)),
          '```',
        );
      }
    }
  }
  return lines;
}

function loadTables(loads: Load[], measured: Map<string, Measured>): string[] {
  const m = (name: string) => measured.get(name)!;
  const lines = [
    `### Throughput and latency (${CONNECTIONS} connections; median over ${ROUNDS} rounds)`,
    '',
    '| target | req/s | per round | p99 | requests | non-2xx | errors, timeouts |',
    '|---|---:|---|---:|---:|---:|---:|',
    ...loads.map((l) => {
      const r = m(l.name);
      return `| ${l.name} | ${int(median(r.reqPerSec))} | ${r.reqPerSec.map(int).join(' · ')} | ${ms(median(r.p99))} | ${int(r.requests)} | ${r.non2xx} | ${r.errors} |`;
    }),
    '',
    '### Where the time goes (CPU ms per request over the measured rounds; 2 cores give 2,000 ms a second to share)',
    '',
    `| target | our / bare server process | PostgreSQL backends | load generator (autocannon) | sum | what ${os.cpus().length} cores give per request (cores × 1,000 ms / req/s) |`,
    '|---|---:|---:|---:|---:|---:|',
    ...loads.map((l) => {
      const r = m(l.name);
      const per = (v: number | undefined) => (v === undefined || r.requests === 0 ? undefined : v / r.requests);
      const cpu = [per(r.serverMs), per(r.databaseMs), per(r.generatorMs)];
      const sum = cpu.every((v) => v !== undefined) ? cpu.reduce((a, b) => a! + b!, 0) : undefined;
      const show = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(2));
      const wall = (os.cpus().length * 1000) / median(r.reqPerSec);
      return `| ${l.name} | ${cpu.map(show).join(' | ')} | ${show(sum)} | ${wall.toFixed(2)} |`;
    }),
    '',
    '### Ratios (req/s, ours / bare; the median of the ratio taken within each round, and its range)',
    '',
    '| request | ours / bare | per-round range | goal | |',
    '|---|---:|---|---:|---|',
  ];
  const kinds = (['class', 'spa', 'confirm'] as const).filter((k) => KINDS.includes(k));
  const rates = (kind: Kind, side: Load['side']) => m(loads.find((l) => l.kind === kind && l.side === side)!.name).reqPerSec;
  const ratioRow = (label: string, a: number[], b: number[], goal: number | null) => {
    // Paired by round: both sides ran within the same minute, under much the same background load.
    const perRound = a.map((v, i) => v / b[i]);
    const value = median(perRound);
    return `| ${label} | ${x(value)} | ${x(Math.min(...perRound))}–${x(Math.max(...perRound))} | ${goal === null ? '—' : `≥ ${goal}`} | ${goal === null ? '' : met(value >= goal)} |`;
  };
  for (const kind of kinds) lines.push(ratioRow(REQUESTS[kind], rates(kind, 'ours'), rates(kind, 'bare'), 0.5));
  for (const kind of kinds) lines.push(ratioRow(`${REQUESTS[kind]}, plain engine / bare`, rates(kind, 'plain'), rates(kind, 'bare'), null));
  for (const kind of kinds)
    lines.push(ratioRow(`${REQUESTS[kind]}, tuned engine / plain engine`, rates(kind, 'ours'), rates(kind, 'plain'), null));
  lines.push(
    '',
    `### p99 latency of our requests at ${CONNECTIONS} connections (median over rounds)`,
    '',
    '| request | p99 (median) | p99 per round | goal | |',
    '|---|---:|---|---:|---|',
    ...kinds.map((kind) => {
      const r = m(loads.find((l) => l.kind === kind && l.side === 'ours')!.name);
      const p99 = median(r.p99);
      return `| ${REQUESTS[kind]} | ${ms(p99)} | ${r.p99.map((v) => String(Math.round(v))).join(' · ')} | < 50 ms | ${CONNECTIONS === 20 ? met(p99 < 50) : '(goal is at 20 connections)'} |`;
    }),
  );
  return lines;
}

runBench(main, progress);
