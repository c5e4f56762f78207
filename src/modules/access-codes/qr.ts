import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { autocommitWrite } from '../../db/engine/index.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import QRCode from 'qrcode';
import { accessCodeSigningKeyBytes, type Config } from '../../config.ts';
import { constantTimeEqual } from '../../platform/crypto.ts';

// The signed QR payload of an access code (docs/partner-guide.md "Access codes"):
//   AC1.<base64url(JSON {kid, id, code, client_id, provider_id, exp})>.<base64url(HMAC-SHA256(key, "AC1.<payload>"))>
// A provider's scanner verifies it offline with the key from GET /v3/api/provider/access-codes/
// verification-key; that is a screen only: redeeming online is what counts.

export const QR_PREFIX = 'AC1';
export const QR_ALGORITHM = 'HMAC-SHA256';

/** What the QR carries; `exp` is the code's expiry in Unix seconds. */
export interface QrPayload {
  kid: string;
  id: string;
  code: string;
  client_id: string;
  provider_id: string | null;
  exp: number;
}

/** The key payloads are signed with, and its id (`kid`), which changes whenever the key does. */
export interface SigningKey {
  kid: string;
  key: Buffer;
}

/**
 * The QR key derived from the configured (or the database's) secret, so the secret itself is never
 * handed out: providers get only this derived key. `kid` is a digest of the key, naming it without revealing it.
 */
export function signingKeyFrom(secret: Buffer): SigningKey {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'reseller-gateway access-code QR v1', 32));
  return { kid: createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

const keys = new WeakMap<Config, Promise<SigningKey>>();

/**
 * ACCESS_CODE_SIGNING_KEY when set (production requires it, src/config.ts); else the database's own
 * key, generated on first use and kept in access_code_signing_key, so every process on one database
 * signs alike without configuration (development and tests only: a copy of the database holds it).
 */
export function signingKey(em: EntityManager, config: Config): Promise<SigningKey> {
  let key = keys.get(config);
  if (!key) {
    key = (
      config.ACCESS_CODE_SIGNING_KEY !== undefined
        ? Promise.resolve(accessCodeSigningKeyBytes(config.ACCESS_CODE_SIGNING_KEY)!)
        : databaseSecret(em)
    ).then(signingKeyFrom);
    key.catch(() => keys.delete(config)); // a failed read is tried again on the next use
    keys.set(config, key);
  }
  return key;
}

async function databaseSecret(em: EntityManager): Promise<Buffer> {
  // Outside the request's transaction (a fork), so the key is committed at once and a racing first
  // use in another process reads the same row on its next statement.
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await autocommitWrite<{ key: string }>(
      em.fork(),
      `with made as (
         insert into access_code_signing_key (key, created_at) values (?, ?) on conflict (id) do nothing returning key
       )
       select key from made union all select key from access_code_signing_key limit 1`,
      [randomBytes(32).toString('base64'), new Date()],
    );
    if (row) return Buffer.from(row.key, 'base64');
  }
  throw new Error('access_code_signing_key: no key after three attempts');
}

const mac = (key: SigningKey, signed: string): string => createHmac('sha256', key.key).update(signed).digest('base64url');

/** The payload string the QR encodes. */
export function signQrPayload(key: SigningKey, fields: Omit<QrPayload, 'kid'>): string {
  const payload: QrPayload = { kid: key.kid, ...fields };
  const signed = `${QR_PREFIX}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${signed}.${mac(key, signed)}`;
}

/** Whether `text` looks like a QR payload (as opposed to a typed 8-character code). */
export const isQrPayload = (text: string): boolean => text.startsWith(`${QR_PREFIX}.`);

/** The payload when its signature verifies with `key`; why not otherwise. */
export function verifyQrPayload(key: SigningKey, text: string): { payload: QrPayload } | { problem: string } {
  const parts = text.split('.');
  if (parts.length !== 3 || parts[0] !== QR_PREFIX || !/^[A-Za-z0-9_-]+$/.test(parts[1]) || !/^[A-Za-z0-9_-]+$/.test(parts[2])) {
    return { problem: `Not an access-code QR payload (${QR_PREFIX}.<payload>.<signature>)` };
  }
  if (!constantTimeEqual(parts[2], mac(key, `${parts[0]}.${parts[1]}`))) {
    return { problem: 'The QR payload signature does not verify: it was altered, or signed with another key' };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return { problem: 'The QR payload is not JSON' };
  }
  const p = payload as Partial<QrPayload> | null;
  if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || typeof p.code !== 'string' || p.kid !== key.kid) {
    return { problem: 'The QR payload lacks its fields' };
  }
  return { payload: p as QrPayload };
}

/** The QR image of `text`, as a PNG data URL (`data:image/png;base64,…`). */
export function qrPngDataUrl(text: string): Promise<string> {
  return QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, scale: 4 });
}
