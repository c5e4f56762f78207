import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { expect } from 'vitest';
import { createProviderKey } from '../../src/modules/providers/index.ts';
import type { TestApp } from './app.ts';
import type { BookingWorld } from './bookings.ts';
import { checkDocumentedResponse } from '../contract/response-schemas.ts';
import { registerDbTable } from './db-state.ts';
import { call, v3, type Call, type Reply } from './http.ts';

// Access codes (docs/partner-guide.md "Access codes"): made over the reseller API (or GraphQL), redeemed over the
// provider API with a provider key. Their tables join every dbState (with the bookings' tables of
// test/support/bookings.ts: entitlements and the visit ledger), so a refused request is seen to
// write nothing there either.

registerDbTable(
  'access_code',
  'select id, status, redeemed_at, redeemed_provider_id, visit_restored, updated_at from access_code order by id',
);
registerDbTable('access_code_session', 'select id, status, updated_at from access_code_session order by id');

export const PROVIDER = '/v3/api/provider';

// jsqr is CommonJS with a `default` in its types: Node hands over module.exports, TypeScript sees the namespace.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

/** POST /access-codes as the world's reseller. */
export const createCode = (app: TestApp, world: BookingWorld, body: unknown, idempotencyKey?: string): Promise<Reply> =>
  v3(app, '/access-codes', { key: world.reseller.key, body, idempotencyKey });

/** POST /access-codes/{session_id}/confirm as the world's reseller. */
export const confirmCode = (app: TestApp, world: BookingWorld, sessionId: string, body: unknown, idempotencyKey?: string): Promise<Reply> =>
  v3(app, `/access-codes/${sessionId}/confirm`, { key: world.reseller.key, body, idempotencyKey });

/** A code that must be made now (201 access_code). */
export async function madeCode(app: TestApp, world: BookingWorld, body: unknown): Promise<any> {
  const res = await createCode(app, world, body);
  expect(res.status, res.text).toBe(201);
  expect(res.body.object, res.text).toBe('access_code');
  return res.body;
}

/** A call to the provider API, its answer held to the OpenAPI document like every v3() answer. */
export async function provider(app: TestApp, path: string, opts: Call = {}): Promise<Reply> {
  const reply = await call(app, `${PROVIDER}${path}`, opts);
  checkDocumentedResponse(opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'), `${PROVIDER}${path}`, reply);
  return reply;
}

/** A new provider API key (pk_…) for `providerId`, as the operator makes one. */
export async function providerKey(app: TestApp, providerId: string): Promise<string> {
  return (await createProviderKey(app.orm.em.fork(), providerId, app.clock.now())).secret;
}

/** POST /access-codes/redeem with a provider key. */
export const redeem = (app: TestApp, key: string, code: string): Promise<Reply> =>
  provider(app, '/access-codes/redeem', { key, body: { code } });

/** The text a QR image (`data:image/png;base64,…`) encodes, read back with pngjs and jsQR as a scanner would. */
export function scanQr(dataUrl: string): string {
  const prefix = 'data:image/png;base64,';
  expect(dataUrl.startsWith(prefix), dataUrl.slice(0, 40)).toBe(true);
  const png = PNG.sync.read(Buffer.from(dataUrl.slice(prefix.length), 'base64'));
  const decoded = jsQR(Uint8ClampedArray.from(png.data), png.width, png.height);
  expect(decoded, 'the QR image decodes').not.toBeNull();
  return decoded!.data;
}

export interface VerificationKey {
  kid: string;
  key: string;
}
export type VerifyAccessCodeQr = (text: string, key: VerificationKey, providerId: string, now?: number) => Record<string, any> | null;

let recipe: Promise<VerifyAccessCodeQr> | undefined;

/**
 * docs/partner-guide.md "Access codes" gives providers a Node snippet to verify a scanned QR payload offline; this
 * is that snippet, read from the guide and loaded as a module, so the guide's recipe is what the
 * tests verify with.
 */
export function readmeVerifier(): Promise<VerifyAccessCodeQr> {
  recipe ??= (async () => {
    const readme = readFileSync(new URL('../../docs/partner-guide.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Access codes\n'));
    const code = /```js\n([\s\S]+?)\n```/.exec(section)?.[1];
    expect(code, 'docs/partner-guide.md "Access codes" has a ```js verification snippet').toBeDefined();
    const file = path.join(tmpdir(), `access-code-recipe-${process.pid}-${Date.now()}.mjs`);
    writeFileSync(file, `${code}\nexport { verifyAccessCodeQr };\n`);
    return ((await import(pathToFileURL(file).href)) as { verifyAccessCodeQr: VerifyAccessCodeQr }).verifyAccessCodeQr;
  })();
  return recipe;
}

/** Every plaintext `codes` found in the text of `rows` (a secret must be in none of them). */
export function secretsIn(rows: unknown[], codes: string[]): string[] {
  const text = JSON.stringify(rows);
  return codes.filter((c) => text.includes(c));
}
