import fs from 'node:fs';
import path from 'node:path';

// A running `serve` on the embedded database leaves its connection details in DATA_DIR so the
// operator CLI can use that database instead of starting a second postgres on the same data.

export interface RunningInstance {
  pid: number;
  url: string;
}

const FILE = 'instance.json';

/** Written once the database is up; mode 0600, since the URL carries the database password. */
export function writeInstanceFile(dataDir: string, url: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, FILE);
  const staging = `${file}.${process.pid}`;
  fs.writeFileSync(staging, `${JSON.stringify({ pid: process.pid, url })}\n`, { mode: 0o600 });
  fs.renameSync(staging, file);
}

/** Removes the file on a clean stop, only if it is this process's. */
export function removeInstanceFile(dataDir: string): void {
  const file = path.join(dataDir, FILE);
  if (readInstanceFile(dataDir)?.pid === process.pid) fs.rmSync(file, { force: true });
}

/** The instance serving DATA_DIR, if one is running; a file left by a dead process is ignored. */
export function runningInstance(dataDir: string): RunningInstance | undefined {
  const found = readInstanceFile(dataDir);
  return found && found.pid !== process.pid && isProcessAlive(found.pid) ? found : undefined;
}

function readInstanceFile(dataDir: string): RunningInstance | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(dataDir, FILE), 'utf8')) as Partial<RunningInstance>;
    return Number.isInteger(parsed.pid) && typeof parsed.url === 'string' ? { pid: parsed.pid!, url: parsed.url } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (EPERM: it does, owned by another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
