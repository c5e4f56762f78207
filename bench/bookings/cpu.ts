import fs from 'node:fs';
import pg from 'pg';

// Where a load's time goes: CPU time of the server process and of the PostgreSQL backends of the
// bench's database, read from /proc before and after the load (Linux, database on this machine;
// elsewhere the figures are left out). Only one target is loaded at a time, so the backends'
// CPU during a load is that load's. /proc counts in clock ticks (USER_HZ, 100 a second on Linux).

const TICK_MS = 10;

/** utime + stime of a process, in ms; undefined when /proc has no such process (or no /proc). */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

export interface CpuSnapshot {
  server: number | undefined;
  backends: Map<number, number>;
}
export interface CpuSpent {
  serverMs: number;
  databaseMs: number;
}

export class CpuMeter {
  private readonly client: pg.Client;
  private readonly database: string;
  private readonly local: boolean;

  constructor(databaseUrl: string) {
    const url = new URL(databaseUrl);
    this.database = decodeURIComponent(url.pathname.slice(1));
    this.local = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(url.hostname) && fs.existsSync('/proc/self/stat');
    this.client = new pg.Client({ connectionString: databaseUrl });
  }

  async open(): Promise<void> {
    if (this.local) await this.client.connect();
  }
  async close(): Promise<void> {
    if (this.local) await this.client.end();
  }

  async snapshot(serverPid: number | undefined): Promise<CpuSnapshot> {
    const backends = new Map<number, number>();
    if (!this.local) return { server: undefined, backends };
    const { rows } = await this.client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [this.database],
    );
    for (const { pid } of rows) {
      const ms = cpuMs(pid);
      if (ms !== undefined) backends.set(pid, ms);
    }
    return { server: serverPid === undefined ? undefined : cpuMs(serverPid), backends };
  }

  /** CPU spent between two snapshots; undefined when it could not be read. A backend that started in between counts whole. */
  static spent(before: CpuSnapshot, after: CpuSnapshot): CpuSpent | undefined {
    if (before.server === undefined || after.server === undefined || after.backends.size === 0) return undefined;
    let databaseMs = 0;
    for (const [pid, ms] of after.backends) databaseMs += ms - (before.backends.get(pid) ?? 0);
    return { serverMs: after.server - before.server, databaseMs };
  }
}
