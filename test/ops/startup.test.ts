import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { isRunning, killStartedProcesses, postmasterPid, runCli, stopLeftoverPostmaster } from './processes.ts';

const app = useApp();

// A start-up that cannot finish says why in one line, exits non-zero and leaves nothing running:
// a busy port is found before the database starts; a later failure stops the database it started.

const T = 120_000;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-startup-'));
fs.chmodSync(dataDir, 0o755);
const busy = net.createServer();

afterAll(async () => {
  await killStartedProcesses();
  await stopLeftoverPostmaster(dataDir);
  await new Promise((r) => busy.close(r));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it(
  'serve on a port in use exits 1 with one line, before starting or migrating any database',
  async () => {
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as net.AddressInfo;
    const run = await runCli(['serve'], { DATABASE_URL: undefined, DATA_DIR: dataDir, PORT: String(port) });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`port ${port} is in use; set PORT\n`);
    expect(run.stdout).toBe('');
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);

    // Same on DATABASE_URL, where nothing is started either: no log line, so no migration ran.
    const onServer = await runCli(['serve'], { DATABASE_URL: app.databaseUrl, PORT: String(port) });
    expect(onServer.code).toBe(1);
    expect(onServer.stderr).toBe(`port ${port} is in use; set PORT\n`);
    expect(onServer.stdout).toBe('');
  },
  T,
);

it(
  'a failure after the embedded PostgreSQL started (a migration that cannot apply) stops that PostgreSQL and exits 1 with one line',
  async () => {
    // A table in the way of the first migration, made on the embedded database while nothing serves it.
    const embedded = await startEmbeddedPostgres({ dataDir, log: createLogger({ LOG_LEVEL: 'silent' }), fsync: false });
    const client = new pg.Client({ connectionString: embedded.url });
    await client.connect();
    await client.query('create table reseller (in_the_way int)');
    await client.end();
    await embedded.stop();

    const run = await runCli(['serve'], { DATABASE_URL: undefined, DATA_DIR: dataDir, PORT: '0' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: .*reseller.*already exists.*\n$/);
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(run.stdout).toMatch(/embedded PostgreSQL is ready/);
    const pid = postmasterPid(dataDir);
    expect(pid === undefined || !isRunning(pid)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'owner.pid'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'instance.json'))).toBe(false);
  },
  T,
);

it(
  'usage errors are reported (exit 2) before any database starts',
  async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-usage-'));
    try {
      const env = { DATABASE_URL: undefined, DATA_DIR: fresh };
      const cases: [string[], RegExp][] = [
        [['resellers', 'create', '--name', 'No Currency'], /^usage: resellers create --name N --currency CUR/],
        [['resellers', 'create', '--name', 'Bad', '--currency', 'EURO'], /^usage: resellers create/],
        [['resellers', 'fund', 'res_x', 'ten'], /^usage: resellers fund/],
        [['keys', 'list'], /^usage: keys list RESELLER_ID/],
        [['keys', 'create', 'res_x', '--lable', 'typo'], /^usage: keys create/],
        [['serve', '--workers', '0'], /^usage: serve \[--workers N\]/],
        [['seed'], /^usage: seed --demo/],
        [['frobnicate'], /^usage: reseller-gateway <command>/],
      ];
      const runs = await Promise.all(cases.map(([args]) => runCli(args, env)));
      runs.forEach((run, i) => {
        expect(run.code, run.args.join(' ')).toBe(2);
        expect(run.stderr, run.args.join(' ')).toMatch(cases[i][1]);
        expect(run.stdout).toBe('');
      });
      expect(fs.readdirSync(fresh)).toEqual([]); // no postgres was initialised
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  },
  T,
);
