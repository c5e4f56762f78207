import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// A 6-digit code has a million values, so a plain hash of it would be read back by trying them
// all; scrypt with a salt of its own makes each try cost ~16 MiB and tens of milliseconds.
const SCRYPT = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function scryptOf(code: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(code, salt, 32, SCRYPT, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashCode(code: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${(await scryptOf(code, salt)).toString('base64url')}`;
}

/** Compared in constant time. */
export async function codeMatches(code: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptOf(code, Buffer.from(salt, 'base64url'));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
