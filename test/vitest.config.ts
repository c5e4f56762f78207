import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { RUNTIME_NODE_FLAGS } from '../src/cli/node-flags.ts';
import { engineFromEnv } from '../src/config.ts';

// `*.engine.test.ts`: the tests that count the tuned engine's statements, round trips and exchanges
// at the wire (src/db/engine/README.md). They describe that engine, so a DB_ENGINE=plain run leaves
// them out; everything else runs with either engine.
const tunedOnly = engineFromEnv() === 'plain' ? ['test/**/*.engine.test.ts'] : [];

// `*.static.test.ts`: the tests whose outcome cannot depend on the database or the engine (the
// docs, the committed generated files, the SDK's types, lint-like source checks; none starts the
// app or opens a connection: test/contract/static-tests.static.test.ts holds them to that).
// `npm test` runs them; STATIC_TESTS=skip leaves them out, which .ci/run sets on its second and
// third runs of the suite only, so CI runs them once instead of three times.
const skipStatic = process.env.STATIC_TESTS === 'skip' ? ['test/**/*.static.test.ts'] : [];

export default defineConfig({
  // One copy of graphql, as in production: otherwise src gets its ESM build while Pothos and yoga
  // get the CommonJS one, and instanceof checks between them fail.
  resolve: {
    alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('../node_modules/graphql/index.js', import.meta.url)) }],
  },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // The browser test needs Chromium; it runs through `npm run test:e2e` (test/e2e/vitest.config.ts).
    // The deployment's topology needs HAProxy and runs once per CI run: `npm run test:topology`
    // (test/topology/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/e2e/**', 'test/topology/**', ...tunedOnly, ...skipStatic],
    globalSetup: ['test/support/global-setup.ts'],
    // Each test file gets its own database cloned from a migrated template, so files run in parallel.
    pool: 'forks',
    // Three forks, not vitest's default of one fewer than the cores (one fork on a 2-core CI machine,
    // which left a core idle while a file imported the app or waited on the database or a child
    // process). Measured on 2 cores, same directories back to back: bench/README.md "Test suite".
    // VITEST_MAX_WORKERS overrides it.
    maxWorkers: 3,
    // The runtime's Node flags `serve` runs with (src/cli/node-flags.ts), so the suite runs the runtime production
    // has; not the server's heap cap, which paces a long-running server's collections, not a test file's.
    execArgv: [...RUNTIME_NODE_FLAGS],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
