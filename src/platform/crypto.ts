import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 (rejection sampling, so no character is more likely than another). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function randomFrom(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/**
 * Secrets are stored as SHA-256 only: they carry enough entropy that a salt adds nothing. Every
 * authenticated request hashes its key (the key cache is keyed by the hash): the one-shot
 * `hash` takes a third of the time of a Hash object.
 */
export function sha256Hex(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/**
 * A new API key: `<prefix>_` + 40 base62 characters (≈238 bits). The secret is shown once; only
 * its SHA-256 and last four characters are kept.
 */
export function newApiKeySecret(prefix: 'sk' | 'pk'): { secret: string; secretHash: string; last4: string } {
  const secret = `${prefix}_${randomBase62(40)}`;
  return { secret, secretHash: sha256Hex(secret), last4: secret.slice(-4) };
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
