import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { masterKey } from '../../platform/secrets.ts';

// The hosted page's forms carry a token made when the page was rendered (docs/partner-guide.md "Hosted sessions"):
// an HMAC of the session's id and the render time, under a key of its own derived from the master
// key. A post must bring one of this session's, so a form built elsewhere, or a token lifted from
// another session's page, is refused. Nothing is stored: any process on the database can check it.

/** A token lives as long as a session can: the longest `expires_in` (docs/partner-guide.md "Hosted sessions"). */
const TOKEN_LIFETIME_MS = 24 * 3600_000;
/** Clocks of two processes may differ a little; a token from a little ahead is still this one's. */
const CLOCK_SKEW_MS = 60_000;

const keys = new WeakMap<Buffer, Buffer>();

async function tokenKey(em: EntityManager, config: Config): Promise<Buffer> {
  const master = await masterKey(em, config);
  let key = keys.get(master);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'reseller-gateway hosted form token', 32));
    keys.set(master, key);
  }
  return key;
}

const macOf = (key: Buffer, sessionId: string, issued: number): Buffer =>
  createHmac('sha256', key).update(`${sessionId}.${issued}`).digest();

/** A token for the forms of `sessionId`'s page rendered now. */
export async function formToken(em: EntityManager, config: Config, sessionId: string, now: Date): Promise<string> {
  const issued = Math.floor(now.getTime() / 1000);
  return `${issued}.${macOf(await tokenKey(em, config), sessionId, issued).toString('base64url')}`;
}

/** Whether `token` was made for `sessionId`'s page within a token's lifetime; compared in constant time. */
export async function isFormTokenOf(
  em: EntityManager,
  config: Config,
  sessionId: string,
  token: string | null,
  now: Date,
): Promise<boolean> {
  const m = token === null ? null : /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return false;
  const issued = Number(m[1]);
  const age = now.getTime() - issued * 1000;
  if (age > TOKEN_LIFETIME_MS || age < -CLOCK_SKEW_MS) return false;
  const expected = macOf(await tokenKey(em, config), sessionId, issued);
  const given = Buffer.from(m[2]!, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
