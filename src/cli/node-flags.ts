import { spawn } from 'node:child_process';
import os from 'node:os';
import process from 'node:process';

/**
 * The Node flags `serve` and `worker` run with (docs/operator-guide.md "Node and npm"); the first two
 * are the runtime's, the last the heap's cap.
 *
 * `--experimental-async-context-frame`: MikroORM keeps a transaction's entity manager in an
 * AsyncLocalStorage, and on Node 22 the first `run()` of one installs promise hooks that every
 * promise of the process pays for from then on. With this flag AsyncLocalStorage is carried by
 * V8's continuation data instead, with no hooks (the default from Node 24).
 * docs/adr/0008-async-context-frames.md has the measurements.
 *
 * `--max-semi-space-size=32`: a request's garbage dies young, in V8's young generation, whose
 * two semi-spaces grow to 16 MiB each by default, and scavenging them was a large share of a busy
 * server's CPU. At 32 MiB they are scavenged half as often for as few survivors. The young
 * generation then takes up to 64 MiB per process instead of 32
 * (docs/adr/0010-larger-young-generation.md).
 *
 * These two change how the code runs, so the test runner's workers take them too (test/vitest.config.ts).
 */
export const RUNTIME_NODE_FLAGS: readonly string[] = [
  ...(Number(process.versions.node.split('.')[0]) < 24 ? ['--experimental-async-context-frame'] : []),
  '--max-semi-space-size=32',
];

/**
 * `--max-old-space-size=512`: under V8's default cap, set from the machine's memory, the old
 * generation fills with garbage to several times what is live before a full collection, and the
 * process keeps the pages, so a busy server's resident memory climbs in steps for minutes. Capped,
 * it stays level for a few percent of throughput (docs/adr/0030-heap-cap.md has the soaks that
 * measured both). An operator who wants another cap passes their own
 * `--max-old-space-size` (on the command line or in NODE_OPTIONS) and it is left as given
 * (docs/operator-guide.md "Node and npm").
 */
const HEAP_CAP = '--max-old-space-size=512';

/** The flags `serve` and `worker` run with: the runtime's and the heap's cap. */
export const SERVER_NODE_FLAGS: readonly string[] = [...RUNTIME_NODE_FLAGS, HEAP_CAP];

const setsHeapCap = (args: readonly string[]) => args.some((arg) => /^--max[-_]old[-_]space[-_]size\b/.test(arg));

/** The server flags this process lacks; a cap of the operator's own, in `execArgv` or NODE_OPTIONS, counts as the cap. */
export const missingServerFlags = (
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] =>
  SERVER_NODE_FLAGS.filter((flag) =>
    flag === HEAP_CAP ? !setsHeapCap([...execArgv, ...nodeOptions.split(/\s+/)]) : !execArgv.includes(flag),
  );

/**
 * Runs this same command line again in a child Node with the server flags, and answers with its
 * exit code, as `npm start` does for its own child. Stop signals sent to this process are passed
 * on (a Ctrl-C reaches both; the server ignores a repeated one), so a supervisor that stops this
 * process stops the server.
 */
export function relaunchWithServerFlags(): Promise<number> {
  const child = spawn(process.execPath, [...missingServerFlags(), ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  const pass = (signal: NodeJS.Signals) => () => {
    child.kill(signal);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, pass(signal));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    // A child killed by a signal answers as a shell reports it: 128 + the signal's number.
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? os.constants.signals[signal] : 0)));
  });
}
