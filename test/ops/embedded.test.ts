import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import {
  childEnv,
  isRunning,
  killStartedProcesses,
  postmasterPid,
  processUid,
  repoRoot,
  runCli,
  Service,
  stopLeftoverPostmaster,
} from './processes.ts';
import { until } from '../support/until.ts';

// The service's embedded PostgreSQL through real `serve` processes with DATABASE_URL unset: first
// start (initdb, migrate, seed), `kill -9` and restart on the same DATA_DIR (stale postmaster),
// SIGTERM/SIGINT shutdown. The steps share one DATA_DIR and run in order, so one initdb serves all.

const T = 90_000;
const V3 = '/v3/api/business/reseller';
// Under the system temp folder and world-traversable: as root, postgres runs as `postgres`.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-ops-'));
fs.chmodSync(dataDir, 0o755);
const env = { DATABASE_URL: undefined, DATA_DIR: dataDir, PORT: '0' };
const asRoot = process.getuid?.() === 0;

async function cleanUp() {
  await killStartedProcesses();
  await stopLeftoverPostmaster(dataDir);
}
beforeEach(() => {
  onTestFailed(cleanUp);
});
afterAll(async () => {
  await cleanUp();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Starts `serve` and waits for its last start-up line; returns it with its base URL. */
async function serve(): Promise<{ service: Service; base: string }> {
  const service = new Service(['serve'], env);
  await service.waitForStdout(/"msg":"listening"\}\n/);
  // The banner goes to stderr, after the "listening" log line on stdout.
  await service.waitForStderr(/^REST V3: .*$/m);
  const listening = service.logLines().find((l) => l.msg === 'listening');
  expect(listening).toMatchObject({ database: 'embedded', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
  const base = listening!.url as string;
  expect(Number(new URL(base).port)).toBeGreaterThan(0);
  return { service, base };
}

async function get(url: string, key?: string) {
  const res = await fetch(url, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: (await res.json()) as any };
}

async function expectProbesAnswer(base: string) {
  expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
  expect(await get(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });
}

/** stdout is the log stream; keys appear only in the banner on stderr. */
function expectNoKeyInLogLines(service: Service) {
  expect(service.stdout).not.toMatch(/sk_/);
  expect(service.stderr.replace(/^ {4}API key: sk_[0-9A-Za-z]{40}$/gm, '')).not.toMatch(/sk_/);
}

let first: { keys: string[]; resellerIds: string[]; passIds: string[] } | undefined;
let second: Service | undefined;
let operatorKey: string | undefined;

describe('serve on the embedded PostgreSQL (DATABASE_URL unset)', () => {
  it(
    'on a fresh DATA_DIR initialises, migrates, seeds once (printing the keys once) and answers /healthz and /readyz',
    async () => {
      const { service, base } = await serve();
      const messages = service.logLines().map((l) => l.msg);
      expect(messages).toContain('initialising embedded PostgreSQL');
      expect(service.logLines().find((l) => l.msg === 'migrations applied')?.applied).toContain('Migration20261122000000_foundation');
      // The banner (keys) is on stderr; stdout is only the JSON log stream.
      const keys = [...service.stderr.matchAll(/API key: (sk_[0-9A-Za-z]{40})/g)].map((m) => m[1]);
      expect(keys).toHaveLength(2);
      expect(service.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('{'))).toEqual([]);
      const resellerIds = [...service.stderr.matchAll(/\((res_[0-9A-Z]{26})\)/g)].map((m) => m[1]);
      expect(resellerIds).toHaveLength(2);
      await expectProbesAnswer(base);

      const passes = await get(`${base}${V3}/passes`, keys[0]);
      expect(passes.status).toBe(200);
      expect(passes.body.data).toHaveLength(2);
      expect((await get(`${base}${V3}/passes`, keys[1])).status).toBe(200);
      // Keys are printed once, never in a log line (the requests above were logged).
      for (const key of keys) expect(`${service.stdout}${service.stderr}`.split(key)).toHaveLength(2);
      expectNoKeyInLogLines(service);

      const pid = postmasterPid(dataDir);
      expect(pid && isRunning(pid)).toBe(true);
      const postgresUid = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()) : process.getuid!();
      if (asRoot) expect(postgresUid).not.toBe(0);
      expect(processUid(pid!)).toBe(postgresUid);

      // kill -9: nothing runs the shutdown, so the service's postgres is left running.
      service.child.kill('SIGKILL');
      expect((await service.exited).signal).toBe('SIGKILL');
      expect(isRunning(pid!)).toBe(true);
      expect(postmasterPid(dataDir)).toBe(pid);
      first = { keys, resellerIds, passIds: passes.body.data.map((p: { id: string }) => p.id) };
    },
    T,
  );

  it(
    'a second serve on the same DATA_DIR stops the stale postmaster and starts on the preserved data without seeding again',
    async (ctx) => {
      if (!first) return ctx.skip();
      const stalePid = postmasterPid(dataDir)!;
      const { service, base } = await serve();
      second = service;
      expect(service.logLines().find((l) => l.msg === 'stopping a stale embedded PostgreSQL left by an earlier run')).toMatchObject({
        pid: stalePid,
      });
      expect(isRunning(stalePid)).toBe(false);
      const pid = postmasterPid(dataDir);
      expect(pid).not.toBe(stalePid);
      expect(pid && isRunning(pid)).toBe(true);

      const messages = service.logLines().map((l) => l.msg);
      expect(messages).not.toContain('initialising embedded PostgreSQL');
      expect(messages).not.toContain('migrations applied');
      expect(`${service.stdout}${service.stderr}`).not.toMatch(/Demo data created|API key:/);
      await expectProbesAnswer(base);
      const passes = await get(`${base}${V3}/passes`, first.keys[0]);
      expect(passes.status).toBe(200);
      expect(passes.body.data.map((p: { id: string }) => p.id)).toEqual(first.passIds);
      expect((await get(`${base}${V3}/passes`, first.keys[1])).status).toBe(200);
      expectNoKeyInLogLines(service);
    },
    T,
  );

  it(
    'an operator command on that DATA_DIR while serve runs uses the running database (DATA_DIR/instance.json, mode 0600)',
    async (ctx) => {
      if (!first || !second?.running) return ctx.skip();
      const pid = postmasterPid(dataDir)!;
      const instanceFile = path.join(dataDir, 'instance.json');
      expect(fs.statSync(instanceFile).mode & 0o777).toBe(0o600);
      expect(JSON.parse(fs.readFileSync(instanceFile, 'utf8'))).toMatchObject({
        pid: second.child.pid,
        url: expect.stringMatching(/^postgres:\/\//),
      });
      const run = await runCli(['keys', 'create', first.resellerIds[0], '--label', 'while serving'], env);
      expect(run.code, run.stderr).toBe(0);
      const made = JSON.parse(run.stdout) as { api_key: string };
      expect(run.stderr).not.toMatch(/embedded PostgreSQL is ready/); // it started none
      expect(postmasterPid(dataDir)).toBe(pid);
      expect(isRunning(pid)).toBe(true);
      const url = second.logLines().find((l) => l.msg === 'listening')!.url as string;
      expect((await get(`${url}${V3}/passes`, made.api_key)).status).toBe(200);
      const listed = await runCli(['keys', 'list', first.resellerIds[0]], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).map((k: { label: string | null }) => k.label)).toContain('while serving');
      // npm start's data survives a machine crash: durable writes (only the test suite turns fsync off).
      const db = new pg.Client({ connectionString: JSON.parse(fs.readFileSync(instanceFile, 'utf8')).url as string });
      await db.connect();
      try {
        expect((await db.query<{ fsync: string }>('show fsync')).rows[0].fsync).toBe('on');
      } finally {
        await db.end();
      }
    },
    T,
  );

  it(
    'SIGTERM makes serve exit 0 and stop its postgres',
    async (ctx) => {
      if (!second?.running) return ctx.skip();
      const pid = postmasterPid(dataDir)!;
      second.child.kill('SIGTERM');
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(second.logLines().find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM' });
      expect(isRunning(pid)).toBe(false);
      const after = postmasterPid(dataDir);
      expect(after === undefined || !isRunning(after)).toBe(true);
      expect(fs.existsSync(path.join(dataDir, 'owner.pid'))).toBe(false);
      expect(fs.existsSync(path.join(dataDir, 'instance.json'))).toBe(false);
    },
    T,
  );

  it(
    '`npm start` passes SIGTERM on: the server and its postgres stop with npm',
    async () => {
      // npm runs the script through `sh -c`; without `exec` in the script, the shell stayed between
      // npm and node, npm's SIGTERM ended the shell only, and the server ran on with its postgres.
      const npm = spawn('npm', ['start'], { cwd: repoRoot, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      npm.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      const exited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
      let server: number | undefined;
      try {
        await until(() => /^REST V3: /m.test(stderr), 'npm start has started serve', 60_000);
        server = Number(fs.readFileSync(path.join(dataDir, 'owner.pid'), 'utf8'));
        const postmaster = postmasterPid(dataDir)!;
        expect(server).not.toBe(npm.pid);
        expect(isRunning(server) && isRunning(postmaster)).toBe(true);
        npm.kill('SIGTERM');
        await exited;
        await until(() => !isRunning(server!) && !isRunning(postmaster), 'the server and its postgres have stopped', 30_000);
        expect(fs.existsSync(path.join(dataDir, 'owner.pid'))).toBe(false);
      } finally {
        // A server left behind by a failure is not this file's child: stop it here.
        if (server !== undefined && isRunning(server)) process.kill(server, 'SIGKILL');
        if (npm.exitCode === null) npm.kill('SIGKILL');
      }
    },
    T,
  );

  it(
    'an operator command on the embedded DATA_DIR prints only its result on stdout and stops its postgres',
    async (ctx) => {
      if (!first) return ctx.skip();
      // An instance.json left by a process that is gone (a kill -9) is ignored.
      const dead = spawnSync('true').pid!;
      fs.writeFileSync(
        path.join(dataDir, 'instance.json'),
        JSON.stringify({ pid: dead, url: 'postgres://postgres:x@127.0.0.1:1/gateway' }),
        { mode: 0o600 },
      );
      const run = await runCli(['keys', 'create', first.resellerIds[0]], env);
      expect(run.code, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout) as { id: string; api_key: string };
      expect(out.api_key).toMatch(/^sk_[0-9A-Za-z]{40}$/);
      // Its logs (the embedded postgres starting) go to stderr, without the key.
      expect(run.stderr).toMatch(/embedded PostgreSQL is ready/);
      expect(run.stderr).not.toMatch(/sk_/);
      const pid = postmasterPid(dataDir);
      expect(pid === undefined || !isRunning(pid)).toBe(true);
      operatorKey = out.api_key;
    },
    T,
  );

  it(
    'SIGINT also makes serve exit 0 and stop its postgres (the key made by the CLI works)',
    async (ctx) => {
      if (!operatorKey) return ctx.skip();
      const { service, base } = await serve();
      expect((await get(`${base}${V3}/passes`, operatorKey)).status).toBe(200);
      const pid = postmasterPid(dataDir)!;
      expect(isRunning(pid)).toBe(true);
      service.child.kill('SIGINT');
      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(isRunning(pid)).toBe(false);
    },
    T,
  );
});
