import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, inject, it } from 'vitest';
import { migrationsList } from '../../src/db/migrations/index.ts';
import { withDatabase } from '../support/global-setup.ts';
import { onDatabaseMigratedTo } from '../support/migrations.ts';
import { killStartedProcesses, runCli, Service } from './processes.ts';

// A safe start (docs/operator-guide.md "Release step"): a DATABASE_URL naming a database that does
// not exist is one line naming it and exit 1 for every command, and the database is not created;
// `serve --no-migrate` (or MIGRATE_ON_START=false) refuses a schema with pending migrations and
// starts on one that `migrate` brought up to date.

const T = 120_000;

afterAll(async () => {
  await killStartedProcesses();
});

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: inject('adminUrl') });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

it(
  'a DATABASE_URL naming a missing database: serve, worker, migrate and operator commands each exit 1 with one line naming it (never the password); it is not created',
  async () => {
    const missing = `${inject('runPrefix')}typo_${randomBytes(3).toString('hex')}`;
    const url = new URL(withDatabase(inject('adminUrl'), missing));
    // Trust authentication accepts any password; the embedded server's own is kept.
    if (!url.password) url.password = 'not-to-be-shown';
    const line = `database "${missing}" does not exist on ${url.hostname}:${url.port || '5432'}; create it or correct DATABASE_URL\n`;
    const commands = [['serve'], ['worker'], ['migrate'], ['seed', '--demo'], ['resellers', 'list'], ['keys', 'list', 'res_x']];
    const runs = await Promise.all(commands.map((args) => runCli(args, { DATABASE_URL: url.toString(), PORT: '0' })));
    for (const run of runs) {
      expect(run.code, run.args.join(' ')).toBe(1);
      expect(run.stderr, run.args.join(' ')).toBe(line);
      expect(run.stdout, run.args.join(' ')).toBe('');
      expect(run.stderr).not.toContain(url.password);
    }
    expect(await databaseExists(missing)).toBe(false);
  },
  T,
);

it(
  '`serve --no-migrate` and MIGRATE_ON_START=false refuse a schema with a pending migration, naming it; after `migrate` they start, applying nothing',
  async () => {
    const [previous, latest] = migrationsList.slice(-2).map((m) => m.name);
    await onDatabaseMigratedTo(previous, async ({ orm, sql }) => {
      const databaseUrl = orm.config.get('clientUrl')!;
      const applied = async () => Number((await sql('select count(*)::int as n from mikro_orm_migrations'))[0].n);
      const refused = await Promise.all([
        runCli(['serve', '--no-migrate'], { DATABASE_URL: databaseUrl, PORT: '0' }),
        runCli(['serve'], { DATABASE_URL: databaseUrl, PORT: '0', MIGRATE_ON_START: 'false' }),
      ]);
      for (const run of refused) {
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).toBe(`the schema is behind this release: 1 migration pending (${latest}); run migrate first\n`);
      }
      expect(await applied()).toBe(migrationsList.length - 1); // nothing was migrated

      const migrated = await runCli(['migrate'], { DATABASE_URL: databaseUrl });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(JSON.parse(migrated.stdout)).toEqual({ applied: [latest], up_to_date: true });
      const again = await runCli(['migrate'], { DATABASE_URL: databaseUrl });
      expect(JSON.parse(again.stdout)).toEqual({ applied: [], up_to_date: true });

      const servers = [
        new Service(['serve', '--no-migrate'], { DATABASE_URL: databaseUrl, PORT: '0' }),
        new Service(['serve'], { DATABASE_URL: databaseUrl, PORT: '0', MIGRATE_ON_START: 'false' }),
      ];
      for (const server of servers) {
        await server.waitForStdout(/"msg":"listening"/);
        expect(server.logLines().some((l) => l.msg === 'migrations applied')).toBe(false);
        server.child.kill('SIGTERM');
        expect(await server.exited).toEqual({ code: 0, signal: null });
      }
      expect(await applied()).toBe(migrationsList.length);
    });
  },
  T,
);
