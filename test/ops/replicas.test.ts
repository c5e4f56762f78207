import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { killStartedProcesses, runCli, Service } from './processes.ts';
import { until } from '../support/until.ts';

// DATABASE_REPLICA_URLS (docs/operator-guide.md "Read replicas") against a real primary and a real
// streaming replica this file makes itself (initdb, pg_basebackup -R), so it runs the same in every
// CI mode: the catalogue's reads are answered by the replica, writes and a caller's reads right
// after its own write by the primary, and with the replica stopped the catalogue still answers,
// from the primary. Each server logs every statement (log_statement=all), which says who ran what.

const T = 90_000;
const V3 = '/v3/api/business/reseller';
const BIN = '/usr/lib/postgresql/15/bin';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-replicas-'));
const servers: Server[] = [];

afterAll(async () => {
  await killStartedProcesses();
  for (const server of servers) await server.stop();
  fs.rmSync(root, { recursive: true, force: true });
}, T);

/** PostgreSQL refuses to run as root: as root the servers run as `postgres` (as src/db/embedded.ts does). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** One postgres process on its data directory, its statement log (stderr) kept. */
class Server {
  log = '';
  private readonly child: ChildProcess;
  readonly dataDir: string;
  readonly port: number;
  constructor(dataDir: string, port: number, user: { uid: number; gid: number } | undefined) {
    this.dataDir = dataDir;
    this.port = port;
    this.child = spawn(
      path.join(BIN, 'postgres'),
      [
        ...['-D', dataDir, '-p', String(port), '-h', '127.0.0.1'],
        ...['-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'wal_level=replica', '-c', 'max_wal_senders=4'],
        ...['-c', 'log_statement=all', '-c', 'log_destination=stderr', '-c', 'logging_collector=off'],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}), env: { PATH: process.env.PATH, LC_ALL: 'C' } },
    );
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.log += chunk.toString();
    });
    servers.push(this);
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async ready(): Promise<void> {
    await until(
      async () => {
        const client = new pg.Client({ connectionString: this.url });
        try {
          await client.connect();
          await client.query('select 1');
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      `postgres on port ${this.port} answers`,
      30_000,
      100,
    );
  }

  /** Fast shutdown; waits for the postmaster to be gone. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGINT');
    await exited;
  }

  /** The statements logged since `mark` (a length of `log`). */
  since(mark: number): string {
    return this.log.slice(mark);
  }
}

let primary: Server;
let replica: Server;
let service: Service;
let base: string;
let demo: { resellers: { id: string; api_key: string; passes: { id: string }[] }[] };

async function get(route: string, key: string) {
  const res = await fetch(`${base}${V3}${route}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
}

/** Replays of the catalogue reads below, by a statement each leaves in a server's log. */
const PASS_LIST = /from pass_package where reseller_id/;
const PROVIDER_LIST = /from "provider" as "p0"/;
const CLASS_LIST = /from "class" as "c0"/;

/** Everything the servers' logs say after `run`: what the primary logged, what the replica logged. */
async function logged(run: () => Promise<void>): Promise<{ primary: string; replica: string }> {
  const marks = [primary.log.length, replica.log.length];
  await run();
  // The server writes its log line as it runs the statement; a moment for the pipe to deliver it.
  await new Promise((r) => setTimeout(r, 200));
  return { primary: primary.since(marks[0]!), replica: replica.since(marks[1]!) };
}

describe('DATABASE_REPLICA_URLS: a primary and a streaming replica', () => {
  it(
    'serve answers the catalogue from the replica, writes and the writer’s next reads from the primary',
    async () => {
      if (!fs.existsSync(path.join(BIN, 'pg_basebackup'))) {
        throw new Error(`${BIN} is missing: this test needs Debian's PostgreSQL 15 server tools (apt-get install postgresql-15)`);
      }
      const user = runAs();
      // The servers, running as `postgres`, must reach and own their directories.
      fs.chmodSync(root, 0o755);
      const primaryDir = path.join(root, 'primary');
      const replicaDir = path.join(root, 'replica');
      if (user) fs.chownSync(root, user.uid, user.gid);
      const asUser = { stdio: 'pipe' as const, ...(user ?? {}), env: { PATH: process.env.PATH, LC_ALL: 'C' } };
      execFileSync(
        path.join(BIN, 'initdb'),
        ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
        asUser,
      );
      // Replication connections from loopback (initdb's default file has them; said here so it does not depend on that).
      fs.appendFileSync(path.join(primaryDir, 'pg_hba.conf'), '\nhost replication postgres 127.0.0.1/32 trust\n');
      primary = new Server(primaryDir, await freePort(), user);
      await primary.ready();

      execFileSync(
        path.join(BIN, 'pg_basebackup'),
        ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--no-sync'],
        asUser,
      );
      replica = new Server(replicaDir, await freePort(), user);
      await replica.ready();
      const standby = new pg.Client({ connectionString: replica.url });
      await standby.connect();
      expect((await standby.query<{ r: boolean }>('select pg_is_in_recovery() as r')).rows[0]!.r).toBe(true);

      const env = { DATABASE_URL: primary.url, DATABASE_REPLICA_URLS: replica.url, PORT: '0' };
      const migrated = await runCli(['migrate'], env);
      expect(migrated.code, migrated.stderr).toBe(0);
      const seeded = await runCli(['seed', '--demo', '--json'], env);
      expect(seeded.code, seeded.stderr).toBe(0);
      demo = JSON.parse(seeded.stdout);
      // The replica has replayed the demo data before serve reads from it.
      const [first, second] = demo.resellers;
      await until(
        async () => (await standby.query('select 1 from reseller where id = $1', [second!.id])).rowCount === 1,
        'the replica has the demo data',
      );
      await standby.end();

      service = new Service(['serve'], env);
      await service.waitForStdout(/"msg":"listening"/, 60_000);
      base = service.logLines().find((l) => l.msg === 'listening')!.url as string;

      // Catalogue reads, by a caller that has written nothing: the replica answers, the primary never sees them.
      const catalogue = await logged(async () => {
        const passes = await get('/passes', first!.api_key);
        expect(passes.status).toBe(200);
        expect(passes.body.data.map((p: { id: string }) => p.id).sort()).toEqual(first!.passes.map((p) => p.id).sort());
        expect((await get('/providers?limit=5', first!.api_key)).status).toBe(200);
        expect((await get('/classes?limit=5', first!.api_key)).status).toBe(200);
      });
      for (const list of [PASS_LIST, PROVIDER_LIST, CLASS_LIST]) {
        expect(catalogue.replica).toMatch(list);
        expect(catalogue.primary).not.toMatch(list);
      }

      // A write: on the primary (a replica refuses writes). Right after it, the writer's own catalogue
      // read is the primary's; another reseller's read at the same moment is still the replica's.
      const passId = first!.passes[0]!.id;
      const afterWrite = await logged(async () => {
        const issued = await fetch(`${base}${V3}/issued_passes`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${first!.api_key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ pass_id: passId, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' }),
        });
        expect(issued.status).toBe(201);
        expect((await get('/passes', first!.api_key)).status).toBe(200);
      });
      expect(afterWrite.primary).toMatch(/insert into "?client"?/i);
      expect(afterWrite.replica).not.toMatch(/insert into/i);
      expect(afterWrite.primary).toMatch(PASS_LIST);
      expect(afterWrite.replica).not.toMatch(PASS_LIST);

      const otherCaller = await logged(async () => {
        expect((await get('/passes', second!.api_key)).status).toBe(200);
      });
      expect(otherCaller.replica).toMatch(PASS_LIST);
      expect(otherCaller.primary).not.toMatch(PASS_LIST);

      // Two seconds after its write, the writer reads from the replica again.
      await new Promise((r) => setTimeout(r, 2100));
      const later = await logged(async () => {
        expect((await get('/passes', first!.api_key)).status).toBe(200);
      });
      expect(later.replica).toMatch(PASS_LIST);
      expect(later.primary).not.toMatch(PASS_LIST);
    },
    T,
  );

  it(
    'with the replica stopped, catalogue reads still answer 200, from the primary, and the log says so once',
    async () => {
      await replica.stop();
      const [first, second] = demo.resellers;
      const fallback = await logged(async () => {
        for (let i = 0; i < 5; i++) {
          for (const reseller of [first!, second!]) {
            const passes = await get('/passes', reseller.api_key);
            expect(passes.status).toBe(200);
            expect(passes.body.data.map((p: { id: string }) => p.id).sort()).toEqual(reseller.passes.map((p) => p.id).sort());
          }
          expect((await get('/providers?limit=5', first!.api_key)).status).toBe(200);
        }
      });
      expect(fallback.primary).toMatch(PASS_LIST);
      expect(fallback.primary).toMatch(PROVIDER_LIST);
      const down = service.logLines().filter((l) => /read replica unreachable/.test(String(l.msg)));
      expect(down).toHaveLength(1);
      // One line, no stack.
      expect(JSON.stringify(down[0])).not.toMatch(/\n\s+at /);
      expect(service.stdout).not.toMatch(/"level":(50|60)/);
    },
    T,
  );

  it(
    'the replica started again: one line says it is back, and the catalogue is read from it again',
    async () => {
      replica = new Server(replica.dataDir, replica.port, runAs());
      await replica.ready();
      await service.waitForStdout(/read replica reachable again/, 30_000);
      const [first] = demo.resellers;
      const back = await logged(async () => {
        expect((await get('/passes', first!.api_key)).status).toBe(200);
      });
      expect(back.replica).toMatch(PASS_LIST);
      expect(back.primary).not.toMatch(PASS_LIST);
      expect(service.logLines().filter((l) => /read replica (unreachable|reachable again)/.test(String(l.msg)))).toHaveLength(2);
    },
    T,
  );
});
