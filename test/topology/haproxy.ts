import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { repoRoot } from '../ops/processes.ts';

// Debian's HAProxy (/usr/sbin/haproxy, `apt-get install haproxy`; .ci/run installs it) run in the
// foreground with deploy/haproxy.cfg, its {{…}} placeholders filled with loopback addresses.

export const HAPROXY = '/usr/sbin/haproxy';

export interface Addresses {
  LISTEN: string;
  INSTANCE_1: string;
  INSTANCE_2: string;
  STATS: string;
}

/** deploy/haproxy.cfg with every placeholder filled; throws when one is left or unknown. */
export function renderConfig(addresses: Addresses): string {
  const template = fs.readFileSync(path.join(repoRoot, 'deploy', 'haproxy.cfg'), 'utf8');
  const rendered = template.replace(/\{\{([A-Z_0-9]+)\}\}/g, (_, name: string) => {
    const value = addresses[name as keyof Addresses];
    if (value === undefined) throw new Error(`deploy/haproxy.cfg names {{${name}}}, which the test does not fill`);
    return value;
  });
  return rendered;
}

/** A free TCP port on 127.0.0.1 (the kernel's pick, released at once for the process that binds it next). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export class HaProxy {
  readonly child: ChildProcess;
  output = '';
  readonly statsBase: string;

  constructor(configFile: string, statsBase: string) {
    this.statsBase = statsBase;
    // -db: foreground, no daemon; the log goes to stdout (`log stdout` in the config).
    this.child = spawn(HAPROXY, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (c: Buffer) => {
      this.output = (this.output + c.toString()).slice(-200_000);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
  }

  /** Each server's status as HAProxy's checks see it ("UP", "DOWN", "UP 1/2" …), from the stats page's CSV. */
  async serverStatus(): Promise<Record<string, string>> {
    const csv = await (await fetch(`${this.statsBase}/stats;csv`)).text();
    const lines = csv.trim().split('\n');
    const header = lines[0]!.replace(/^# /, '').split(',');
    const [px, sv, status] = ['pxname', 'svname', 'status'].map((n) => header.indexOf(n));
    const out: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const cells = line.split(',');
      if (cells[px!] === 'instances' && !['FRONTEND', 'BACKEND'].includes(cells[sv!]!)) out[cells[sv!]!] = cells[status!]!;
    }
    return out;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const closed = new Promise((resolve) => this.child.once('close', resolve));
    this.child.kill('SIGTERM');
    await closed;
  }
}
