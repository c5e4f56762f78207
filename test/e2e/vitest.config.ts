import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { RUNTIME_NODE_FLAGS } from '../../src/cli/node-flags.ts';

// The browser tests: the same settings as test/vitest.config.ts, but only test/e2e/**/*.e2e.test.ts.
// They drive Debian's Chromium (/usr/bin/chromium), so `npm test` leaves them out.
export default defineConfig({
  // One copy of graphql, as in production (see test/vitest.config.ts).
  resolve: {
    alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('../../node_modules/graphql/index.js', import.meta.url)) }],
  },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/e2e/**/*.e2e.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    execArgv: [...RUNTIME_NODE_FLAGS],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
