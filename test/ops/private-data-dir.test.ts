import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killStartedProcesses, postmasterPid, processUid, Service, stopLeftoverPostmaster } from './processes.ts';

// A checkout under a private folder (mode 0700, like a home or a mktemp dir): as root, postgres
// runs as `postgres`, which cannot traverse it, so the data moves to /var/lib/reseller-gateway;
// as a normal user the data stays where DATA_DIR says.

const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-private-'));
fs.chmodSync(privateDir, 0o700);
const dataDir = path.join(privateDir, 'checkout', '.data');
const asRoot = process.getuid?.() === 0;
let usedDir: string | undefined;

afterAll(async () => {
  await killStartedProcesses();
  if (usedDir) {
    await stopLeftoverPostmaster(usedDir);
    fs.rmSync(usedDir, { recursive: true, force: true });
  }
  fs.rmSync(privateDir, { recursive: true, force: true });
});

it('DATA_DIR under a private folder › the service starts, answers and stops its postgres', async () => {
  const service = new Service(['serve'], { DATABASE_URL: undefined, DATA_DIR: dataDir, PORT: '0' });
  await service.waitForStdout(/"msg":"listening"\}\n/, 90_000);
  const lines = service.logLines();
  const moved = lines.find((l) => typeof l.using === 'string');
  usedDir = (moved?.using as string | undefined) ?? dataDir;
  if (asRoot) {
    expect(moved).toMatchObject({ level: 40, dataDir });
    expect(usedDir.startsWith('/var/lib/reseller-gateway/checkout-')).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
  } else {
    expect(moved).toBeUndefined();
  }
  const pid = postmasterPid(usedDir);
  expect(pid).toBeGreaterThan(0);
  expect(processUid(pid!)).not.toBe(0);

  const base = lines.find((l) => l.msg === 'listening')!.url as string;
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  service.child.kill('SIGTERM');
  expect((await service.exited).code).toBe(0);
  expect(postmasterPid(usedDir)).toBeUndefined();
}, 120_000);
