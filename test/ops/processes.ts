import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../src/cli/node-flags.ts';

// The operator CLI as a real child process (`node src/main.ts …`, with the server's Node flags as
// `npm start` passes them), and the bookkeeping that makes sure every process a test starts (and
// any postgres it leaves behind) is gone afterwards.

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const nodeBin = path.join(repoRoot, 'node_modules', '.bin', 'node');
const started = new Set<ChildProcess>();

/** The child's environment: ours minus anything that would change where it runs, plus overrides. */
export function childEnv(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'PUBLIC_BASE_URL', 'LOG_LEVEL']) delete env[name];
  env.LOG_LEVEL = 'info';
  // A stopping server drains for SHUTDOWN_DRAIN_MS (5 s by default) before it closes: the tests that
  // stop one without looking at the drain need not wait for it (test/ops/shutdown.test.ts does).
  env.SHUTDOWN_DRAIN_MS = '0';
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function start(args: string[], env: NodeJS.ProcessEnv, nodeFlags: readonly string[] = SERVER_NODE_FLAGS, root = repoRoot): ChildProcess {
  const child = spawn(nodeBin, [...nodeFlags, 'src/main.ts', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

export interface CliRun {
  args: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs one CLI command to completion (the `src/main.ts` of `root`: this checkout, or a copy of it). */
export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 60_000, root = repoRoot): Promise<CliRun> {
  const child = start(args, childEnv(env), SERVER_NODE_FLAGS, root);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ args, code, signal, stdout, stderr });
    });
  });
}

/** A long-running `serve`; `stdout`/`stderr` accumulate. */
export class Service {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: (() => void)[] = [];

  /** `nodeFlags`: what `node` is started with before src/main.ts; `[]` is the plain `node src/main.ts serve`. */
  constructor(args: string[], env: Record<string, string | undefined>, nodeFlags?: readonly string[]) {
    this.child = start(args, childEnv(env), nodeFlags);
    this.child.stdout!.on('data', (c: Buffer) => {
      this.stdout += c.toString();
      this.wake();
    });
    this.child.stderr!.on('data', (c: Buffer) => {
      this.stderr += c.toString();
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.wake();
        resolve({ code, signal });
      });
    });
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits until stdout matches; fails with the output when the process exits first or time runs out. */
  waitForStdout(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return this.waitFor('stdout', pattern, timeoutMs);
  }

  /** Waits until stderr matches (the start-up banner goes there). */
  waitForStderr(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return this.waitFor('stderr', pattern, timeoutMs);
  }

  private async waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this[stream]);
      if (match) return match;
      if (!this.running)
        throw new Error(
          `serve exited (${this.child.exitCode ?? this.child.signalCode}) before ${pattern}:\n${this.stdout}\n${this.stderr}`,
        );
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${this.stdout}\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 250);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The complete JSON log lines on stdout. */
  logLines(): Record<string, unknown>[] {
    return this.stdout
      .split('\n')
      .slice(0, -1)
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

/** SIGKILLs every child this file started that is still running. */
export async function killStartedProcesses(): Promise<void> {
  const alive = [...started].filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(
    alive.map(
      (c) =>
        new Promise<void>((resolve) => {
          c.once('close', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}

/** Whether a pid is a live process (a zombie awaiting its reaper counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The postmaster's pid from DATA_DIR/pg/postmaster.pid, if the file exists. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Stops a postgres a test left running on dataDir (fast shutdown, then SIGKILL). */
export async function stopLeftoverPostmaster(dataDir: string): Promise<void> {
  const pid = postmasterPid(dataDir);
  if (!pid || !isRunning(pid)) return;
  // Only a postgres serving this very data dir (a recycled pid could be anyone's).
  const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  if (!cmdline.includes(` ${path.join(dataDir, 'pg')} `)) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && isRunning(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (isRunning(pid)) process.kill(pid, 'SIGKILL');
}

/** The real uid of a process, from /proc/<pid>/status. */
export function processUid(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'));
  return Number(line!.split(/\s+/)[1]);
}
