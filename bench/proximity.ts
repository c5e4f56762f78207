// Proximity benchmark: 100,000 providers loaded through the catalogue import path into a fresh
// database, then the query GET /providers?lat=&lon=&radius_km=10&limit=20 runs (proximityPage),
// timed by PostgreSQL itself (EXPLAIN ANALYZE "Execution Time") at 50 random points of a dense city,
// against the same query with index scans disabled (a sequential scan) in the same run.
//
//   node_modules/.bin/node bench/proximity.ts [--providers 100000] [--points 50] [--keep]
//
// Without DATABASE_URL it starts an embedded PostgreSQL under the system temp folder and removes it
// afterwards; with DATABASE_URL it creates (and drops) a database `bench_proximity_<random>` there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createDatabaseIfMissing, startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { configWith } from '../src/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import { newId } from '../src/platform/ids.ts';
import { proximityPlannerSettings, proximityPage, type ProximityQuery } from '../src/platform/geo.ts';
import { importCatalog } from '../src/modules/catalog/catalog.import.ts';
import { progressReporter } from '../src/modules/catalog/catalog.progress.ts';
import type { ProviderRecord } from '../src/modules/catalog/catalog.schema.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const PROVIDERS = arg('--providers', 100_000);
const POINTS = arg('--points', 50);
const SEQ_POINTS = Math.min(POINTS, 20);
// --keep (with DATABASE_URL): leave the loaded database for exploring plans by hand.
const KEEP = process.argv.includes('--keep');

// A deterministic generator, so runs compare.
let state = 42;
const rand = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = Math.imul(state ^ (state >>> 15), state | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

// A third of the providers in Berlin (dense: ~33,000 within ~20 km), the rest over 30 other
// cities and the countryside between them, so the index has to discard far more than it returns.
const DENSE = { lat: 52.52, lon: 13.405 };
const others = Array.from({ length: 30 }, (_, i) => ({ lat: 36 + (i % 6) * 4 + rand(), lon: -8 + Math.floor(i / 6) * 7 + rand() }));

function provider(i: number): ProviderRecord {
  const r = rand();
  const centre = r < 0.33 ? DENSE : r < 0.9 ? others[i % others.length] : { lat: 35 + rand() * 25, lon: -10 + rand() * 40 };
  const km = r < 0.9 ? (rand() + rand() + rand()) * 5 : 0;
  const angle = rand() * 2 * Math.PI;
  const lat = centre.lat + (km / 111.2) * Math.cos(angle);
  const lon = centre.lon + (km / (111.2 * Math.cos((centre.lat * Math.PI) / 180))) * Math.sin(angle);
  return {
    id: newId('provider'),
    name: `Bench Provider ${i}`,
    category: i % 3 === 0 ? 'SPA' : 'GYM',
    tier: ['BRONZE', 'SILVER', 'GOLD', 'PLATINUM'][i % 4],
    description: '',
    address: `${i} Bench Street`,
    city: 'Bench',
    country: 'DE',
    lat: Math.round(lat * 1e6) / 1e6,
    lon: Math.round(lon * 1e6) / 1e6,
    timezone: 'Europe/Berlin',
    opening_hours: { mon: [{ open: '06:00', close: '22:00' }] },
    room_capacity: 1,
    cancellation_policy: { free_cancellation_hours: 24, late_cancellation_refund_percent: 0 },
  };
}

// The query GET /providers runs with lat/lon and no other filter (src/modules/providers/list-providers.ts).
const providersQuery: ProximityQuery = { from: 'provider p', pointAlias: 'p', idColumn: 'p.id', select: 'p.*', where: [], params: [] };

interface Statement {
  sql: string;
  params: unknown[];
}

/** Runs proximityPage for real, recording the statements it sends (so EXPLAIN sees exactly those). */
async function statementsOf(
  em: EntityManager,
  lat: number,
  lon: number,
  startingAfter?: string,
  limit = 20,
): Promise<{ statements: Statement[]; ids: string[] }> {
  const statements: Statement[] = [];
  // Records what proximityPage sends where every engine's statement arrives, pg's Client.query
  // (src/db/engine sends it there, as a named statement or not). Its planner settings and the
  // transaction's edges are left out: explain() replays the settings (proximityPlannerSettings).
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, values] = args as [string | { text?: string; values?: unknown[] }, unknown[] | undefined];
    const text = typeof first === 'string' ? first : first?.text;
    if (text && !/^\s*(set|begin|commit|rollback|savepoint|release)\b/i.test(text)) {
      // Back to `?` placeholders, as explain() sends them ($1, $2, … come in order).
      statements.push({ sql: text.replace(/\$\d+/g, '?'), params: (typeof first === 'string' ? values : first.values) ?? [] });
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    const page = await proximityPage<{ id: string }>(em, providersQuery, { lat, lon, radiusKm: 10 }, { limit, startingAfter });
    return { statements, ids: page.data.map((r) => r.id) };
  } finally {
    pg.Client.prototype.query = query;
  }
}

async function explain(em: EntityManager, s: Statement, seqScan = false): Promise<{ ms: number; plan: unknown }> {
  return em.transactional(async (tx) => {
    for (const setting of proximityPlannerSettings) await tx.execute(`set local ${setting}`);
    if (seqScan)
      await tx.execute('set local enable_indexscan = off; set local enable_bitmapscan = off; set local enable_indexonlyscan = off');
    const [row] = await tx.execute<{ 'QUERY PLAN': [{ 'Execution Time': number; Plan: unknown }] }[]>(
      `explain (analyze, buffers, format json) ${s.sql}`,
      s.params,
    );
    const [result] = row['QUERY PLAN'];
    return { ms: result['Execution Time'], plan: result.Plan };
  });
}

async function explainText(em: EntityManager, s: Statement): Promise<string> {
  return em.transactional(async (tx) => {
    for (const setting of proximityPlannerSettings) await tx.execute(`set local ${setting}`);
    const rows = await tx.execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${s.sql}`, s.params);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function main() {
  const log = createLogger(configWith({ LOG_LEVEL: 'warn' }));
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let url: string;
  let adminUrl: string | undefined;
  const database = `bench_proximity_${randomBytes(4).toString('hex')}`;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
    await createDatabaseIfMissing(adminUrl, database);
    const u = new URL(adminUrl);
    u.pathname = `/${database}`;
    url = u.toString();
  } else {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-proximity-'));
    fs.chmodSync(dataDir, 0o755); // the postgres user (when we run as root) must reach it
    embedded = await startEmbeddedPostgres({ dataDir, log });
    url = embedded.url;
  }
  const orm = await openOrm(url, 4);
  try {
    await migrate(orm);
    const em = orm.em.fork();
    const [{ version }] = await em.execute<{ version: string }[]>('select version()');
    console.log(
      `PostgreSQL: ${version}\nmachine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB\n`,
    );

    const started = Date.now();
    const providers = Array.from({ length: PROVIDERS }, (_, i) => provider(i));
    const progress = progressReporter(process.stderr);
    const counts = await importCatalog(em, { providers }, { at: new Date(), onProgress: progress });
    progress.finish();
    const importSeconds = (Date.now() - started) / 1000;
    console.log(`imported ${counts.providers.inserted} providers through the catalogue import in ${importSeconds.toFixed(1)} s`);
    await em.execute('analyze provider');

    const points = Array.from({ length: POINTS }, () => ({
      lat: DENSE.lat + (rand() - 0.5) * 0.1,
      lon: DENSE.lon + (rand() - 0.5) * 0.16,
    }));
    const [{ n: inRadius }] = await em.execute<{ n: string }[]>(
      'select count(*) as n from provider where earth_distance(ll_to_earth(lat, lon), ll_to_earth(?, ?)) <= 10000',
      [points[0].lat, points[0].lon],
    );
    console.log(`providers within 10 km of the first point: ${inRadius}\n`);

    const first: number[] = [];
    const second: number[] = [];
    const wide: number[] = [];
    const sequential: number[] = [];
    let sample: Statement | undefined;
    for (const [i, p] of points.entries()) {
      const page1 = await statementsOf(em, p.lat, p.lon);
      const [query] = page1.statements;
      sample ??= query;
      // A warm cache, as in a running service: the first execution only loads pages.
      await explain(em, query);
      first.push((await explain(em, query)).ms);
      // Page 2: the cursor's distance lookup and the keyset query.
      const page2 = await statementsOf(em, p.lat, p.lon, page1.ids.at(-1));
      let ms = 0;
      for (const s of page2.statements) ms += (await explain(em, s)).ms;
      second.push(ms);
      if (i < SEQ_POINTS) {
        sequential.push((await explain(em, query, true)).ms);
        // The largest page the API serves, for the record.
        const [hundred] = (await statementsOf(em, p.lat, p.lon, undefined, 100)).statements;
        wide.push((await explain(em, hundred)).ms);
      }
    }

    const report = (name: string, xs: number[]) =>
      console.log(
        `${name.padEnd(44)} median ${fmt(quantile(xs, 0.5)).padStart(10)}   p95 ${fmt(quantile(xs, 0.95)).padStart(10)}   (${xs.length} points)`,
      );
    console.log('database time (EXPLAIN ANALYZE Execution Time), radius 10 km, limit 20:');
    report('first page, GiST index', first);
    report('second page (cursor lookup + keyset), GiST', second);
    report('first page, index scans off (sequential)', sequential);
    report('first page with limit 100, GiST', wide);
    console.log(
      `\nratio: the sequential scan takes ${(quantile(sequential, 0.5) / quantile(first.slice(0, SEQ_POINTS), 0.5)).toFixed(0)}× the indexed query's median (same points, same run)`,
    );
    console.log(`target: < 20 ms database time → ${quantile(first, 0.95) < 20 ? 'met' : 'NOT met'} at p95\n`);
    console.log('plan of the first page at the first point:\n');
    console.log(await explainText(em, sample!));
  } finally {
    await orm.close();
    if (embedded) await embedded.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (adminUrl && KEEP) console.log(`\nkept the database: ${url}`);
    else if (adminUrl) {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${client.escapeIdentifier(database)}`);
      await client.end();
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
