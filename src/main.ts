#!/usr/bin/env node
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadConfig, ConfigError, type Config } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrate } from './db/orm.ts';
import { seedDemo, type DemoSeed } from './db/seed.ts';
import { systemClock } from './platform/clock.ts';
import { DomainError } from './platform/errors.ts';
import { createLogger, type Logger } from './platform/logger.ts';
import { startOutboxDispatcher } from './platform/outbox.ts';
import { importCatalog } from './modules/catalog/catalog.import.ts';
import { progressReporter } from './modules/catalog/catalog.progress.ts';
import { CatalogRejected } from './modules/catalog/catalog.validate.ts';
import {
  createApiKey, createReseller, fundReseller, revokeApiKey, setResellerStatus,
} from './modules/resellers/resellers.service.ts';

const USAGE = `usage: reseller-gateway <command>

  serve                                start the HTTP server (migrates; seeds demo data on an empty database)
  migrate                              apply pending migrations
  seed --demo [--json]                 create demo resellers, keys, passes and a catalogue (3 cities) on an empty database
  resellers create --name N --currency EUR
  resellers disable|enable RESELLER_ID
  resellers fund RESELLER_ID AMOUNT    credit the business account (minor units)
  keys create RESELLER_ID [--label L]  prints the new key once
  keys revoke KEY_ID
  catalog import FILE                  load providers, services, classes, instances, co-pay options and
                                       pass packages from a JSON file (docs/catalog-format.md); all or nothing
  print-schema                         write schema.graphql and docs/openapi.json from the code

Without DATABASE_URL an embedded PostgreSQL runs with its data under DATA_DIR (default .data).`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  const log = createLogger(config, command === 'serve' ? 'stdout' : 'stderr');
  switch (command) {
    case 'serve': return serve(config, log);
    case 'print-schema': return printSchemas();
    case 'migrate': return withDatabase(config, log, async () => 0);
    case 'seed': return withDatabase(config, log, async (db) => {
      if (!rest.includes('--demo')) throw usage('seed takes --demo');
      const seeded = await seedDemo(db.orm.em.fork(), systemClock.now());
      if (!seeded) {
        console.error('the database already holds resellers; demo data is only seeded on an empty database');
        return 1;
      }
      console.log(rest.includes('--json') ? JSON.stringify(seeded, null, 2) : describeSeed(seeded, config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`));
      return 0;
    });
    case 'resellers': return withDatabase(config, log, async (db) => {
      const em = db.orm.em.fork();
      const [action, id, amount] = rest;
      const now = systemClock.now();
      if (action === 'create') {
        const r = await createReseller(em, { name: flag(rest, '--name') ?? '', currency: flag(rest, '--currency') ?? 'EUR' }, now);
        console.log(JSON.stringify({ id: r.id, name: r.name, currency: r.currency }));
      } else if (action === 'disable' || action === 'enable') {
        const r = await setResellerStatus(em, id ?? '', action === 'disable' ? 'DISABLED' : 'ACTIVE');
        console.log(JSON.stringify({ id: r.id, status: r.status }));
      } else if (action === 'fund') {
        if (!/^\d+$/.test(amount ?? '') || Number(amount) <= 0 || !Number.isSafeInteger(Number(amount))) throw usage('resellers fund RESELLER_ID AMOUNT (a positive integer of minor units)');
        const balance = await em.transactional((tx) => fundReseller(tx, id ?? '', Number(amount), now));
        console.log(JSON.stringify({ id, balance }));
      } else {
        throw usage('resellers create|disable|enable|fund');
      }
      return 0;
    });
    case 'keys': return withDatabase(config, log, async (db) => {
      const em = db.orm.em.fork();
      const [action, id] = rest;
      if (action === 'create') {
        const key = await createApiKey(em, id ?? '', systemClock.now(), flag(rest, '--label'));
        console.log(JSON.stringify({ id: key.id, api_key: key.secret, note: 'shown once; store it now' }));
      } else if (action === 'revoke') {
        await revokeApiKey(em, id ?? '', systemClock.now());
        console.log(JSON.stringify({ id, revoked: true }));
      } else {
        throw usage('keys create|revoke');
      }
      return 0;
    });
    case 'catalog': {
      const [action, file] = rest;
      if (action !== 'import' || !file || rest.length !== 2) throw usage('catalog import FILE');
      // Read and parse before starting a database: a wrong path fails at once.
      const input = readCatalogFile(file);
      return withDatabase(config, log, (db) => runCatalogImport(db.orm.em.fork(), input));
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

function readCatalogFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`catalog import: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`catalog import: ${file} is not valid JSON: ${(err as Error).message}`);
  }
}

async function runCatalogImport(em: Parameters<typeof importCatalog>[0], input: unknown): Promise<number> {
  const progress = progressReporter(process.stderr);
  try {
    const counts = await importCatalog(em, input, { at: systemClock.now(), onProgress: progress });
    progress.finish();
    console.log(JSON.stringify({ imported: counts }));
    return 0;
  } catch (err) {
    progress.finish();
    if (!(err instanceof CatalogRejected)) throw err;
    const lines = [`catalog import: ${err.message}:`, ...err.problems.map((p) => `  ${p.at}: ${p.message}`)];
    if (err.total > err.problems.length) lines.push(`  … and ${err.total - err.problems.length} more`);
    console.error(lines.join('\n'));
    return 1;
  }
}

class UsageError extends Error {}
const usage = (m: string) => new UsageError(`usage: ${m}`);

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function withDatabase(config: Config, log: Logger, run: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<number>): Promise<number> {
  const db = await openDatabase(config, log);
  try {
    await migrate(db.orm);
    return await run(db);
  } finally {
    await db.close();
  }
}

async function serve(config: Config, log: Logger): Promise<number> {
  const db = await openDatabase(config, log);
  const applied = await migrate(db.orm);
  if (applied.length) log.info({ applied }, 'migrations applied');
  const seeded = await seedDemo(db.orm.em.fork(), systemClock.now());
  // Loaded here only: the other commands start faster without the GraphQL schema.
  const { buildServer } = await import('./server.ts');
  const server = buildServer({ orm: db.orm, config, clock: systemClock, log });
  const dispatcher = config.OUTBOX_IN_PROCESS
    ? startOutboxDispatcher(db.orm, {}, { clock: systemClock, log, pollMs: config.OUTBOX_POLL_MS })
    : undefined;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const { port } = server.address() as AddressInfo;
  const base = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${port}`;
  log.info({ url: base, database: db.embedded ? 'embedded' : 'DATABASE_URL' }, 'listening');
  if (seeded) console.log(`\n${describeSeed(seeded, base)}\n`);
  console.log(`GraphQL and GraphiQL: ${base}/graphql\nREST V3: ${base}/v3/api/business/reseller (OpenAPI at /v3/api/business/reseller/openapi.json)`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    server.closeIdleConnections();
    await new Promise((r) => server.close(r));
    await dispatcher?.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return new Promise<number>(() => undefined);
}

function describeSeed(seed: DemoSeed, base: string): string {
  const lines = ['Demo data created. API keys are shown once — store them now:'];
  for (const r of seed.resellers) {
    lines.push(`  ${r.name} (${r.id}), balance ${r.balance} ${r.currency} minor units`, `    API key: ${r.api_key}`);
    for (const p of r.passes) lines.push(`    pass ${p.id}  ${p.name} (${p.payment_model})`);
  }
  const c = seed.catalog;
  if (c) {
    lines.push(
      `Catalogue: ${c.providers} providers (${c.gyms} gyms, ${c.spas} spas) in ${c.cities.map((city) => `${city.name} (${city.timezone})`).join(', ')};`,
      `  ${c.spa_services} spa services, ${c.copay_options} gym co-pay options, ${c.class_categories} class categories, ${c.classes} classes with ${c.class_instances} instances over the next 14 days`,
    );
    const [city] = c.cities;
    // The key is not repeated here: it is printed once, above.
    lines.push(`What is near me in ${city.name} (API_KEY = one of the keys above):`, `  curl -H "Authorization: Bearer $API_KEY" '${base}/v3/api/business/reseller/providers?lat=${city.lat}&lon=${city.lon}&radius_km=3'`);
  }
  return lines.join('\n');
}

async function printSchemas(): Promise<number> {
  const { printedSchema } = await import('./graphql/schema.ts');
  const { openApiDocument } = await import('./rest/openapi.ts');
  const { routes } = await import('./rest/router.ts');
  writeFileSync('schema.graphql', printedSchema());
  writeFileSync('docs/openapi.json', `${JSON.stringify(openApiDocument(routes), null, 2)}\n`);
  console.log('wrote schema.graphql and docs/openapi.json');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof UsageError) console.error(err.message);
    else if (err instanceof DomainError) console.error(`${err.code}: ${err.message}${err.param ? ` (${err.param})` : ''}`);
    else console.error(err);
    process.exitCode = 1;
  },
);
