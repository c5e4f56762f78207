import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import { sdkCodegenConfig } from '../../packages/sdk/codegen.ts';

// The SDK (packages/sdk) is generated and committed: CI fails when src/gql/ is not what
// `npm run sdk:generate` makes of schema.graphql and src/operations.ts, and when the SDK or its example
// does not type-check against it (a schema change that breaks an operation breaks here).
const root = fileURLToPath(new URL('../..', import.meta.url));
const committed = join(root, 'packages/sdk/src/gql');
const scratch = mkdtempSync(join(tmpdir(), 'sdk-gql-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('packages/sdk', () => {
  it('src/gql/ is what `npm run sdk:generate` makes of schema.graphql and src/operations.ts', async () => {
    await generate({ ...sdkCodegenConfig(`${scratch}/`), cwd: root, silent: true }, true);
    const fresh = readdirSync(scratch).sort();
    expect(readdirSync(committed).sort(), 'packages/sdk/src/gql has other files than sdk:generate makes').toEqual(fresh);
    for (const file of fresh) {
      expect(readFileSync(join(committed, file), 'utf8'), `packages/sdk/src/gql/${file} is stale: run \`npm run sdk:generate\``).toBe(
        readFileSync(join(scratch, file), 'utf8'),
      );
    }
  });

  it('the manifest holds every operation, each under the sha256 of its text', async () => {
    const manifest = JSON.parse(readFileSync(join(committed, 'persisted-documents.json'), 'utf8')) as Record<string, string>;
    const { createHash } = await import('node:crypto');
    for (const [id, text] of Object.entries(manifest)) {
      expect(id).toBe(`sha256:${createHash('sha256').update(text).digest('hex')}`);
    }
    const names = Object.values(manifest).map((text) => /^(query|mutation|subscription) (\w+)/.exec(text)?.[2]);
    expect(names.sort()).toEqual(
      [
        'BookClass',
        'BookSpa',
        'CancelBooking',
        'CreateAccessCode',
        'GetClass',
        'GetClient',
        'GetCurrentSession',
        'GetIssuedPass',
        'GetSpaAvailability',
        'ListBookings',
        'ListClasses',
        'ListProviders',
        'WatchAccessCodeRedeemed',
        'WatchBookingStatus',
      ].sort(),
    );
  });

  it('type-checks: `tsc --noEmit -p packages/sdk` (src and examples) reports no error', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const run = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '--pretty', 'false', '-p', 'packages/sdk'], {
      cwd: root,
    }).then(
      (ok) => ({ code: 0, output: ok.stdout + ok.stderr }),
      (failed: { code?: number; stdout?: string; stderr?: string }) => ({
        code: failed.code ?? 1,
        output: `${failed.stdout}${failed.stderr}`,
      }),
    );
    expect(run.output).toBe('');
    expect(run.code).toBe(0);
  }, 120_000);
});
