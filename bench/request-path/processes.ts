import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../src/cli/node-flags.ts';
import { freePort } from '../../src/db/embedded.ts';

export { freePort };

// The servers under load run as child processes, so the load generator never shares their event
// loop. Every child is tracked here and stopped on exit, on an error and on Ctrl-C.

export interface Target {
  name: string;
  port: number;
  child: ChildProcess;
  stderr: () => string;
}

const children = new Set<ChildProcess>();

/**
 * The settings production requires of `serve` beyond the database (docs/operator-guide.md "Configuration"): a key
 * for access-code QR signatures, one per bench run.
 */
export const productionSettings = { ACCESS_CODE_SIGNING_KEY: randomBytes(32).toString('hex') };

/**
 * A load from one key and one address is what the rate limits refuse (docs/operator-guide.md "Rate limits"): the
 * benches measure the service, so they lift them (the limiter still runs, in-process).
 */
const liftedLimits = Object.fromEntries(
  [
    'RATE_LIMIT_PER_SECOND',
    'RATE_LIMIT_BURST',
    'RATE_LIMIT_FAILED_AUTH_PER_SECOND',
    'RATE_LIMIT_FAILED_AUTH_BURST',
    'RATE_LIMIT_REDEEM_PER_SECOND',
    'RATE_LIMIT_REDEEM_BURST',
  ].map((name) => [name, '100000000']),
);

/**
 * Our server exactly as deployed: `serve` with the Node flags `npm start` passes (one process: the
 * CPU read from /proc is the server's), its own process, logging off, no in-process outbox.
 */
export const startOurServer = (name: string, databaseUrl: string, env: Record<string, string> = {}) =>
  startServer(
    name,
    ourMain,
    ['serve'],
    {
      ...productionSettings,
      ...liftedLimits,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      OUTBOX_IN_PROCESS: 'false',
      ...env,
    },
    SERVER_NODE_FLAGS,
  );
const ourMain = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** Starts `node [...nodeFlags] <script> [...args]` with `env` on a free loopback port and waits until it accepts connections. */
export async function startServer(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  nodeFlags: readonly string[] = [],
): Promise<Target> {
  const port = await freePort();
  // An IPC channel lets our own target scripts notice when the bench dies without cleaning up.
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], {
    // A clean environment: only what the bench decides, so settings of the calling shell do not leak in.
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const deadline = Date.now() + 60_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited during start-up:\n${stderr}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen within 60 s:\n${stderr}`);
    await sleep(100);
  }
  return { name, port, child, stderr: () => stderr };
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export async function stopAllServers(): Promise<void> {
  await Promise.all([...children].map(stopServer));
}

/** Last resort when the process is exiting anyway: no time to wait for a graceful stop. */
export function killAllServersNow(): void {
  for (const child of children) child.kill('SIGKILL');
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** For the target scripts: exit when the bench that started them goes away. */
export function exitWithParent(): void {
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
