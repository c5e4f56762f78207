import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { missingServerFlags, RUNTIME_NODE_FLAGS, SERVER_NODE_FLAGS } from '../../src/cli/node-flags.ts';
import { useApp } from '../support/app.ts';
import { isRunning, killStartedProcesses, repoRoot, Service } from './processes.ts';

const app = useApp();

// `serve` and `worker` run with the server's Node flags (src/cli/node-flags.ts, docs/operator-guide.md "Node and
// npm"): `npm start` passes them; started any other way, the command runs itself again with them.

const T = 120_000;
// The server the relaunch starts is not a child of this test: stop it here if a failed test left it.
let relaunched: number | undefined;
afterAll(async () => {
  if (relaunched !== undefined && isRunning(relaunched)) process.kill(relaunched, 'SIGKILL');
  await killStartedProcesses();
});

/** A process's command line, as the kernel has it (Linux). */
const commandLine = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
const childrenOf = (pid: number) =>
  fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

it('the pinned Node gets the async-context-frame flag, a larger young generation and a capped heap; npm start and the systemd units pass them, and the suite runs with the runtime ones', () => {
  expect(process.versions.node.split('.')[0]).toBe('22');
  expect(RUNTIME_NODE_FLAGS).toEqual(['--experimental-async-context-frame', '--max-semi-space-size=32']);
  expect(SERVER_NODE_FLAGS).toEqual([...RUNTIME_NODE_FLAGS, '--max-old-space-size=512']);
  expect(process.execArgv).toEqual(expect.arrayContaining([...RUNTIME_NODE_FLAGS]));
  const scripts = (JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
  // `exec`: the shell npm runs the script in becomes node, so npm's SIGTERM reaches the server (test/ops/embedded.test.ts).
  expect(scripts.start).toBe(`exec node ${SERVER_NODE_FLAGS.join(' ')} src/main.ts serve`);
  // The deployment's units start the server itself with them (deploy/README.md), not a launcher.
  for (const [unit, command] of [
    ['reseller-gateway@.service', 'serve'],
    ['reseller-gateway-worker.service', 'worker'],
  ]) {
    const execStart = /^ExecStart=(.*)$/m.exec(fs.readFileSync(`${repoRoot}/deploy/systemd/${unit}`, 'utf8'))![1];
    expect(execStart).toBe(`/opt/reseller-gateway/node_modules/.bin/node ${SERVER_NODE_FLAGS.join(' ')} src/main.ts ${command}`);
  }
});

it("an operator's own heap cap, on the command line or in NODE_OPTIONS, stands instead of ours", () => {
  expect(missingServerFlags([...RUNTIME_NODE_FLAGS], '')).toEqual(['--max-old-space-size=512']);
  expect(missingServerFlags([...RUNTIME_NODE_FLAGS, '--max-old-space-size=2048'], '')).toEqual([]);
  expect(missingServerFlags([...RUNTIME_NODE_FLAGS, '--max_old_space_size=2048'], '')).toEqual([]);
  expect(missingServerFlags([...RUNTIME_NODE_FLAGS], '--enable-source-maps --max-old-space-size=1024')).toEqual([]);
  expect(missingServerFlags([], '--max-old-space-size=1024')).toEqual([...RUNTIME_NODE_FLAGS]);
  // A flag that only begins like it is not a cap.
  expect(missingServerFlags([...RUNTIME_NODE_FLAGS, '--max-old-space-sizes=1'], '')).toEqual(['--max-old-space-size=512']);
});

it(
  '`node src/main.ts serve` without the flags serves from a child started with them; SIGTERM to the first stops both, exit 0',
  async () => {
    const service = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0' }, []);
    await service.waitForStdout(/"msg":"listening"/, 90_000);
    const { url } = service.logLines().find((l) => l.msg === 'listening')! as { url: string };
    expect(commandLine(service.child.pid!).slice(1)).toEqual(['src/main.ts', 'serve']);

    const [server, ...others] = childrenOf(service.child.pid!);
    relaunched = server;
    expect(others).toEqual([]);
    expect(commandLine(server).slice(1)).toEqual([...SERVER_NODE_FLAGS, path.join(repoRoot, 'src/main.ts'), 'serve']);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(isRunning(server)).toBe(false);
    expect(service.logLines().some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);
  },
  T,
);

it(
  '`worker` started with the flags runs in that same process',
  async () => {
    const service = new Service(['worker'], { DATABASE_URL: app.databaseUrl });
    await service.waitForStdout(/"msg":"worker started"/, 60_000);
    expect(childrenOf(service.child.pid!)).toEqual([]);
    expect(commandLine(service.child.pid!).slice(1)).toEqual([...SERVER_NODE_FLAGS, 'src/main.ts', 'worker']);
  },
  T,
);
