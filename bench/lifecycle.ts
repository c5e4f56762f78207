import { killAllServersNow, sleep, stopAllServers } from './request-path/processes.ts';

// One lifecycle for every bench script (bench/README.md): on exit, on an error and on Ctrl-C the
// servers it started are stopped, then its cleanup steps (proxy, database, embedded cluster) run
// newest first.

const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | undefined;

/** A step to run at the end, whatever ends the script. */
export function onCleanup(step: () => Promise<void>): void {
  cleanups.push(step);
}

function cleanup(progress: (message: string) => void): Promise<void> {
  return (cleaning ??= (async () => {
    await stopAllServers();
    for (const step of cleanups.reverse()) await step().catch((err: unknown) => progress(`cleanup: ${(err as Error).message}`));
  })());
}

/** Runs a bench's `main`, cleaning up after it, after an error, on SIGINT/SIGTERM and at exit. */
export function runBench(main: () => Promise<void>, progress: (message: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      progress(`${signal}: stopping the servers and dropping the database …`);
      const hard = setTimeout(() => {
        killAllServersNow();
        process.exit(130);
      }, 15_000);
      void cleanup(progress).finally(() => {
        clearTimeout(hard);
        process.exit(130);
      });
    });
  }
  process.once('exit', killAllServersNow);
  main()
    .then(
      () => cleanup(progress),
      async (err: unknown) => {
        console.error(err);
        process.exitCode = 1;
        await cleanup(progress);
      },
    )
    .finally(() => sleep(0));
}
