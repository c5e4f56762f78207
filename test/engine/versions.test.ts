import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { ENGINE_WRITTEN_AGAINST } from '../../src/db/engine/versions.ts';
import { ENGINE_PARTS } from '../../src/db/engine/index.ts';
import { withDatabase } from '../support/global-setup.ts';
import { killStartedProcesses, repoRoot, runCli } from '../ops/processes.ts';

// The tuned engine reaches into pg, Kysely and MikroORM (src/db/engine/README.md), so it starts
// only on the versions it was written against. A copy of this checkout whose pg says 8.99.0 (its
// package.json; everything else the same packages, linked) stands for an upgrade nobody checked.

const T = 120_000;
const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-engine-versions-'));
let databaseUrl: string;

async function tables(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>("select count(*)::int as n from pg_tables where schemaname = 'public'");
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  fs.cpSync(path.join(repoRoot, 'src'), path.join(copy, 'src'), { recursive: true });
  fs.copyFileSync(path.join(repoRoot, 'package.json'), path.join(copy, 'package.json'));
  const modules = path.join(copy, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(repoRoot, 'node_modules'))) {
    if (entry !== 'pg') fs.symlinkSync(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
  }
  fs.cpSync(path.join(repoRoot, 'node_modules', 'pg'), path.join(modules, 'pg'), { recursive: true });
  const manifest = path.join(modules, 'pg', 'package.json');
  fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replace(/"version": "[^"]+"/, '"version": "8.99.0"'));

  const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
  await createDatabaseIfMissing(inject('adminUrl'), database);
  databaseUrl = withDatabase(inject('adminUrl'), database);
}, T);

afterAll(async () => {
  await killStartedProcesses();
  fs.rmSync(copy, { recursive: true, force: true });
});

it(
  'the tuned engine on a pg it was not written against refuses to start with one line, before touching the database',
  async () => {
    const run = await runCli(['migrate'], { DATABASE_URL: databaseUrl, DB_ENGINE: undefined }, 60_000, copy);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `the tuned database engine does not run on pg 8.99.0 (written against ${ENGINE_WRITTEN_AGAINST.pg}): ` +
        'check src/db/engine/README.md "On an upgrade", or start with DB_ENGINE=plain\n',
    );
    expect(await tables(databaseUrl)).toBe(0);
  },
  T,
);

it(
  'DB_ENGINE_WITHOUT naming something that is not a part of the engine refuses to start with one line, naming the parts',
  async () => {
    const run = await runCli(
      ['migrate'],
      { DATABASE_URL: databaseUrl, DB_ENGINE: undefined, DB_ENGINE_WITHOUT: 'edges-along,turbo' },
      60_000,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `invalid configuration:\n  DB_ENGINE_WITHOUT: turbo is not a part of the engine (${ENGINE_PARTS.join(', ')})\n`,
    );
    expect(await tables(databaseUrl)).toBe(0);
  },
  T,
);

it(
  "the plain engine, on the dependencies' public APIs only, runs on that pg",
  async () => {
    const run = await runCli(['migrate'], { DATABASE_URL: databaseUrl, DB_ENGINE: 'plain' }, 60_000, copy);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(await tables(databaseUrl)).toBeGreaterThan(10);
  },
  T,
);

it("this checkout's packages are the versions the tuned engine names", async () => {
  const lock = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  for (const [name, version] of Object.entries(ENGINE_WRITTEN_AGAINST)) {
    expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(version);
  }
});
