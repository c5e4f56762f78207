import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, inject, it } from 'vitest';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { migrationsList } from '../../src/db/migrations/index.ts';
import { withDatabase } from '../support/global-setup.ts';
import { killStartedProcesses, runCli, Service } from './processes.ts';

// Any number of instances starting at once all come up (docs/architecture.md "Migrations"): on one
// new, empty database, four `migrate` and three `serve` started together take turns at the start
// lock, and each migration is applied once. Then two `seed --demo` at once: one seeds, the other
// finds the resellers and says so. The database is made on the suite's server (the embedded one
// when DATABASE_URL is unset), the way an operator makes it: `serve` never creates one.

const T = 180_000;
const EMPTY_SEED = 'the database already holds resellers; demo data is only seeded on an empty database\n';

let databaseUrl: string;

afterAll(async () => {
  await killStartedProcesses();
});

async function sql<T>(query: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(query)).rows as T[];
  } finally {
    await client.end();
  }
}

it(
  'four `migrate` and three `serve` started at once on an empty database all succeed; each migration is applied once, nothing is seeded',
  async () => {
    const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
    await createDatabaseIfMissing(inject('adminUrl'), database);
    databaseUrl = withDatabase(inject('adminUrl'), database);

    const env = { DATABASE_URL: databaseUrl, PORT: '0', OUTBOX_IN_PROCESS: 'false' };
    const servers = Array.from({ length: 3 }, () => new Service(['serve'], env));
    const migrations = await Promise.all(Array.from({ length: 4 }, () => runCli(['migrate'], { DATABASE_URL: databaseUrl }, 120_000)));
    await Promise.all(servers.map((s) => s.waitForStdout(/"msg":"listening"/, 120_000)));

    const applied: string[] = [];
    for (const run of migrations) {
      expect(run.code, run.stderr).toBe(0);
      const printed = JSON.parse(run.stdout) as { applied: string[]; up_to_date: boolean };
      expect(printed.up_to_date).toBe(true);
      applied.push(...printed.applied);
    }
    for (const server of servers) {
      const line = server.logLines().find((l) => l.msg === 'migrations applied');
      applied.push(...((line?.applied as string[] | undefined) ?? []));
    }
    // Whoever took the lock first applied them all; every later one found the schema up to date.
    expect(applied.sort()).toEqual(migrationsList.map((m) => m.name).sort());
    const rows = await sql<{ name: string; n: number }>('select name, count(*)::int as n from mikro_orm_migrations group by name');
    expect(rows).toHaveLength(migrationsList.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(await sql('select id from reseller')).toEqual([]); // serve on DATABASE_URL never seeds

    for (const server of servers) {
      const base = server.logLines().find((l) => l.msg === 'listening')!.url as string;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      server.child.kill('SIGTERM');
    }
    for (const server of servers) expect(await server.exited).toEqual({ code: 0, signal: null });
  },
  T,
);

it(
  'two `seed --demo` at once: one seeds, the other exits 1 with its one line; nothing is written twice',
  async () => {
    const runs = await Promise.all([0, 1].map(() => runCli(['seed', '--demo', '--json'], { DATABASE_URL: databaseUrl })));
    const [seeded, refused] = runs[0].code === 0 ? runs : [runs[1], runs[0]];
    expect(seeded.code, seeded.stderr).toBe(0);
    expect(JSON.parse(seeded.stdout).resellers).toHaveLength(2);
    expect(refused.code).toBe(1);
    expect(refused.stderr.replace(/^\{.*"msg":"another instance is migrating or seeding; waiting for it"\}\n/, '')).toBe(EMPTY_SEED);
    expect(refused.stdout).toBe('');
    const [counts] = await sql<{ resellers: number; keys: number }>(
      'select (select count(*)::int from reseller) as resellers, (select count(*)::int from api_key) as keys',
    );
    expect(counts).toEqual({ resellers: 2, keys: 2 });
  },
  T,
);
