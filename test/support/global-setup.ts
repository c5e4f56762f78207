import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, createDatabaseIfMissing, type EmbeddedPostgres } from '../../src/db/embedded.ts';
import { openOrm, migrate } from '../../src/db/orm.ts';
import { createLogger } from '../../src/platform/logger.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDatabase: string;
    runPrefix: string;
  }
}

// The whole suite runs against a real PostgreSQL: embedded by default, DATABASE_URL when set.
// A migrated template database is cloned for each test file.
export default async function setup(project: TestProject) {
  const log = createLogger({ LOG_LEVEL: 'warn' });
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    // Under the system temp folder: the postgres user (when we run as root) can traverse it.
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-test-'));
    fs.chmodSync(dataDir, 0o755);
    // fsync off: the suite's data is thrown away, and durable writes would only slow it down.
    embedded = await startEmbeddedPostgres({ dataDir, log, database: 'postgres', fsync: false });
    adminUrl = embedded.adminUrl;
  }
  // One prefix per run, so two runs against one server never touch each other's databases.
  const runPrefix = `gw_${randomBytes(4).toString('hex')}_`;
  const templateDatabase = `${runPrefix}template`;
  await createDatabaseIfMissing(adminUrl, templateDatabase);
  const orm = await openOrm(withDatabase(adminUrl, templateDatabase), 2);
  await migrate(orm);
  await orm.close();
  project.provide('adminUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);
  project.provide('runPrefix', runPrefix);

  return async () => {
    await dropDatabases(adminUrl, `${runPrefix}%`).catch(() => undefined);
    await embedded?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function dropDatabases(adminUrl: string, like: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [like]);
    for (const { datname } of rows) await client.query(`drop database if exists ${client.escapeIdentifier(datname)} with (force)`);
  } finally {
    await client.end();
  }
}
