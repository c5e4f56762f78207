import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabaseIfMissing, startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.ts';
import { createLogger } from '../src/platform/logger.ts';

// A bench's own database (bench/README.md): with DATABASE_URL a fresh database
// `bench_<name>_<random>` on that server, else an embedded PostgreSQL under the system temp folder;
// drop() removes either, and is safe to call twice.

export interface Database {
  url: string;
  drop(): Promise<void>;
}

export async function openDatabase(name: string, progress: (m: string) => void): Promise<Database> {
  const log = createLogger({ LOG_LEVEL: 'warn' });
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    // Under the system temp folder: the postgres user (when we run as root) can traverse it.
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
    fs.chmodSync(dataDir, 0o755);
    progress('starting an embedded PostgreSQL …');
    // A throwaway cluster: no fsync (nothing here needs to survive a crash).
    embedded = await startEmbeddedPostgres({ dataDir, log, database: 'postgres', fsync: false });
    adminUrl = embedded.adminUrl;
  }
  const database = `bench_${name}_${randomBytes(4).toString('hex')}`;
  await createDatabaseIfMissing(adminUrl, database);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const admin = adminUrl;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    drop: () =>
      (dropped ??= (async () => {
        const client = new pg.Client({ connectionString: admin });
        await client.connect();
        try {
          await client.query(`drop database if exists ${client.escapeIdentifier(database)} with (force)`);
        } finally {
          await client.end();
        }
        await embedded?.stop();
        if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

export function withPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}
