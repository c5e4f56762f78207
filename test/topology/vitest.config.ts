import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { RUNTIME_NODE_FLAGS } from '../../src/cli/node-flags.ts';

// The deployment's topology (deploy/, docs/operator-guide.md "Deploying on several machines"): the
// same settings as test/vitest.config.ts, but only test/topology/**/*.test.ts. It runs Debian's
// HAProxy and the Redis at 127.0.0.1:6379, and its processes share the machine's two cores, so CI
// runs it once (.ci/run), not in each of the suite's three database modes; `npm test` leaves it out.
export default defineConfig({
  // One copy of graphql, as in production (see test/vitest.config.ts).
  resolve: {
    alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('../../node_modules/graphql/index.js', import.meta.url)) }],
  },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/topology/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    execArgv: [...RUNTIME_NODE_FLAGS],
    testTimeout: 30_000,
    hookTimeout: 300_000,
  },
});
