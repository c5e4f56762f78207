import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { withDatabase } from '../support/global-setup.ts';
import { killStartedProcesses, runCli, Service } from './processes.ts';

// Backup and restore as docs/operator-guide.md "Backups" tells an operator to do them: `pg_dump
// --format=custom` of the live database, `pg_restore` into a new one, `serve` on the copy. The copy
// answers the same wallets, bookings and passes through the API, every ledger still sums to its
// balance, API keys still authenticate, and an Idempotency-Key used before the dump replays.
//
// pg_dump must be at least as new as the server it dumps, and Debian's client tools are
// PostgreSQL 15's: the test runs on the PostgreSQL 15 server (DATABASE_URL's, or 127.0.0.1:5432
// when the suite runs on the embedded database, whose PostgreSQL is newer).

const exec = promisify(execFile);
const T = 180_000;
const server = process.env.DATABASE_URL
  ? withDatabase(process.env.DATABASE_URL, 'postgres')
  : 'postgres://postgres@127.0.0.1:5432/postgres';
const databases: string[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-backup-'));

afterAll(async () => {
  await killStartedProcesses();
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  for (const db of databases) await admin.query(`drop database if exists ${admin.escapeIdentifier(db)} with (force)`);
  await admin.end();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function newDatabase(tag: string): Promise<string> {
  const name = `backup_${tag}_${randomBytes(4).toString('hex')}`;
  databases.push(name);
  await createDatabaseIfMissing(server, name);
  return withDatabase(server, name);
}

interface Demo {
  resellers: { id: string; api_key: string; credit_packages: { id: string }[]; clients: { id: string }[] }[];
}

const API = '/v3/api/business/reseller';

async function serveOn(databaseUrl: string): Promise<{ base: string; service: Service }> {
  const service = new Service(['serve'], { DATABASE_URL: databaseUrl, PORT: '0' });
  await service.waitForStdout(/"msg":"listening"/, 90_000);
  return { base: service.logLines().find((l) => l.msg === 'listening')!.url as string, service };
}

/** What a reseller reads about each demo client: its pass, wallet (with transactions) and bookings. */
async function readThroughApi(base: string, demo: Demo): Promise<unknown> {
  const get = async (key: string, p: string) => {
    const res = await fetch(`${base}${API}${p}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status, p).toBe(200);
    return res.json();
  };
  const seen: Record<string, unknown> = {};
  for (const r of demo.resellers) {
    for (const c of r.clients) {
      seen[c.id] = {
        client: await get(r.api_key, `/clients/${c.id}`),
        pass: await get(r.api_key, `/issued_passes/${c.id}`),
        credits: await get(r.api_key, `/clients/${c.id}/credits`),
        bookings: await get(r.api_key, `/clients/${c.id}/bookings?limit=100`),
      };
    }
  }
  return seen;
}

async function ledgerMismatches(databaseUrl: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const one = async (sql: string) => Number((await client.query<{ n: string }>(sql)).rows[0].n);
    return {
      wallets: await one(`select count(*) as n from client c
        where c.credit_balance <> coalesce((select sum(case when t.type = 'CREDIT' then t.amount else -t.amount end)
                                              from credit_transaction t where t.client_id = c.id), 0)`),
      business_accounts: await one(`select count(*) as n from business_account a
        where a.balance <> coalesce((select sum(case when t.type = 'CREDIT' then t.amount else -t.amount end)
                                       from business_transaction t where t.reseller_id = a.reseller_id), 0)`),
      spots_without_bookings: await one(`select count(*) as n from class_instance ci
        where ci.spots_taken <> (select count(*) from booking b where b.class_instance_id = ci.id and b.status in ('PENDING', 'CONFIRMED'))`),
    };
  } finally {
    await client.end();
  }
}

describe('backup and restore (docs/operator-guide.md "Backups")', () => {
  it(
    'a pg_dump restored into a new database answers the same balances, ledgers and bookings, and replays an Idempotency-Key',
    async () => {
      const live = await newDatabase('live');
      expect((await runCli(['migrate'], { DATABASE_URL: live })).code).toBe(0);
      const seeded = await runCli(['seed', '--demo', '--json'], { DATABASE_URL: live });
      expect(seeded.code, seeded.stderr).toBe(0);
      const demo = JSON.parse(seeded.stdout) as Demo;

      // A money movement through the API, with a key whose replay must survive the restore.
      const { base, service } = await serveOn(live);
      const [reseller] = demo.resellers;
      const purchase = {
        method: 'POST',
        headers: { Authorization: `Bearer ${reseller.api_key}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
        body: JSON.stringify({ client_id: reseller.clients[0].id, credit_package_id: reseller.credit_packages[0].id }),
      };
      const bought = await fetch(`${base}${API}/credit_purchases`, purchase);
      expect(bought.status).toBe(201);
      const boughtBody = await bought.json();
      const before = await readThroughApi(base, demo);
      const balancesBefore = JSON.parse((await runCli(['resellers', 'list'], { DATABASE_URL: live })).stdout);
      service.child.kill('SIGTERM');
      await service.exited;

      // The operator guide's commands, as written there.
      const dump = path.join(dir, 'gateway.dump');
      await exec('pg_dump', ['--format=custom', `--file=${dump}`, `--dbname=${live}`]);
      const copy = await newDatabase('copy');
      await exec('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${copy}`, dump]);
      const migrated = await runCli(['migrate'], { DATABASE_URL: copy });
      expect(migrated.code, migrated.stderr).toBe(0);

      const restored = await serveOn(copy);
      expect(await readThroughApi(restored.base, demo)).toEqual(before);
      expect(JSON.parse((await runCli(['resellers', 'list'], { DATABASE_URL: copy })).stdout)).toEqual(balancesBefore);
      // The demo fills some classes without bookings (few spots left), so spots match the live database, not 0.
      expect(await ledgerMismatches(copy)).toEqual({ ...(await ledgerMismatches(live)), wallets: 0, business_accounts: 0 });
      const replay = await fetch(`${restored.base}${API}/credit_purchases`, purchase);
      expect(replay.status).toBe(201);
      expect(await replay.json()).toEqual(boughtBody);
      expect(await readThroughApi(restored.base, demo)).toEqual(before);
    },
    T,
  );
});
