#!/usr/bin/env node
// The package's command (`npx reseller-gateway`). Plain JavaScript on purpose: src/main.ts needs
// Node's TypeScript type stripping (Node >= 22.17), and an older Node stops at the .ts extension
// with ERR_UNKNOWN_FILE_EXTENSION before any of our code runs. Here it gets one clear line instead.
import process from 'node:process';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 17)) {
  process.stderr.write(`reseller-gateway needs Node >= 22.17 (this is ${process.versions.node}); run it with \`npx reseller-gateway\` or \`npm start\`, `
    + 'which use the project\'s pinned Node, or directly as `node_modules/.bin/node src/main.ts`\n');
  process.exit(1);
}
await import('../main.ts');
