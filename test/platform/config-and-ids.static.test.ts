import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { idKindOf, isId, newId } from '../../src/platform/ids.ts';
import { randomBase62, sha256Hex } from '../../src/platform/crypto.ts';
import { canonicalJson, fingerprint } from '../../src/platform/idempotency.ts';

describe('config', () => {
  it('defaults › a valid, frozen configuration', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      IDEMPOTENCY_TTL_SECONDS: 90,
      IDEMPOTENCY_WAIT_MS: 10_000,
      GRAPHQL_INTROSPECTION: true,
      BODY_LIMIT_BYTES: 1_048_576,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('several bad settings › one error listing every problem', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', GRAPHQL_INTROSPECTION: 'yes' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'GRAPHQL_INTROSPECTION']) expect(message).toContain(name);
  });
});

describe('ids', () => {
  it('newId › <prefix>_<ULID>, increasing within a process even in one millisecond', () => {
    const at = Date.now();
    const ids = Array.from({ length: 50 }, () => newId('client', at));
    for (const id of ids) expect(id).toMatch(/^client_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
  });

  it('idKindOf and isId › dispatch on the prefix and reject lookalikes', () => {
    const id = newId('issuedPass');
    expect(idKindOf(id)).toBe('issuedPass');
    expect(isId('issuedPass', id)).toBe(true);
    expect(isId('pass', id)).toBe(false);
    expect(idKindOf('pass_notaulid')).toBeUndefined();
    expect(idKindOf(`zzz_${id.slice(6)}`)).toBeUndefined();
  });
});

describe('secrets and fingerprints', () => {
  it('randomBase62 › the requested length from the base62 alphabet, different each time', () => {
    const a = randomBase62(40);
    expect(a).toMatch(/^[0-9A-Za-z]{40}$/);
    expect(randomBase62(40)).not.toBe(a);
    expect(sha256Hex('sk_x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('canonicalJson › key order does not change the fingerprint, values do', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(fingerprint({ a: 1, b: 2 })).toBe(fingerprint({ b: 2, a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: '1' }));
  });
});
