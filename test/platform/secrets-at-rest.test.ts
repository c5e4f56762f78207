import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configWith, ConfigError } from '../../src/config.ts';
import { secretBox } from '../../src/platform/secrets.ts';
import { useApp, type TestApp } from '../support/app.ts';
import { clientBody, createPassPackage, createReseller } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

// docs/operator-guide.md "Secrets at rest": every response kept for an Idempotency-Key is sealed, under SECRETS_KEY
// when it is set, else under a master key the database keeps; replays still return the same bytes.

const configured = randomBytes(32);
const withKey = useApp({ SECRETS_KEY: configured.toString('base64') });
const withoutKey = useApp();

/** Issues a pass with an Idempotency-Key, replays it, and returns both replies and the record as stored. */
async function issueTwice(app: TestApp) {
  const reseller = await createReseller(app, { balance: 1_000_000 });
  const pass = await createPassPackage(app, reseller);
  const key = randomUUID();
  const send = () => v3(app, '/issued_passes', { key: reseller.key, idempotencyKey: key, body: clientBody(pass.id) });
  const first = await send();
  expect(first.status, first.text).toBe(201);
  const replay = await send();
  const [record] = await app.sql<{ sealed: string }>(
    "select response_body #>> '{}' as sealed from idempotency_record where reseller_id = ? and key = ?",
    [reseller.id, key],
  );
  return { first, replay, sealed: record.sealed };
}

describe('responses stored for an Idempotency-Key', () => {
  it('are sealed under a key derived from SECRETS_KEY when it is set, and replay byte for byte', async () => {
    const { first, replay, sealed } = await issueTwice(withKey);
    const box = secretBox(configured, 'idempotency responses');
    expect(sealed.startsWith(`sealed:v1:${box.keyId}:`)).toBe(true);
    for (const shown of [first.body.passcode, first.body.client_id, 'ada@example.com']) expect(sealed).not.toContain(shown);
    expect(box.open(sealed)).toBe(first.text);
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    // The configured key is the one used: the database keeps none of its own.
    expect(await withKey.sql('select name from instance_secret')).toEqual([]);
  });

  it("are sealed under the database's own master key when SECRETS_KEY is unset", async () => {
    const { first, replay, sealed } = await issueTwice(withoutKey);
    const [row] = await withoutKey.sql<{ value: string }>("select value from instance_secret where name = 'master'");
    const box = secretBox(Buffer.from(row.value, 'base64'), 'idempotency responses');
    expect(sealed.startsWith(`sealed:v1:${box.keyId}:`)).toBe(true);
    expect(sealed).not.toContain(first.body.passcode);
    expect(box.open(sealed)).toBe(first.text);
    expect(replay.text).toBe(first.text);
    // One master key, made once, whatever the number of requests.
    await issueTwice(withoutKey);
    expect(await withoutKey.sql('select name from instance_secret')).toEqual([{ name: 'master' }]);
  });

  it('cannot be opened, nor forged, under another key', () => {
    const box = secretBox(randomBytes(32), 'idempotency responses');
    const sealed = box.seal('{"code":"ABCD2345"}');
    expect(() => secretBox(randomBytes(32), 'idempotency responses').open(sealed)).toThrow(/sealed with key/);
    // One bit of the sealed bytes flipped (not a character of their text, whose last may carry only padding bits).
    const [prefix, payload] = [sealed.slice(0, sealed.lastIndexOf(':') + 1), sealed.slice(sealed.lastIndexOf(':') + 1)];
    const bytes = Buffer.from(payload, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    const flipped = prefix + bytes.toString('base64url');
    expect(flipped).not.toBe(sealed);
    expect(() => box.open(flipped)).toThrow();
    // Two seals of one text differ (a fresh IV each time).
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });
});

describe('SECRETS_KEY', () => {
  it('takes 32 bytes as hex or base64 and refuses anything else at start', () => {
    expect(configWith({ SECRETS_KEY: randomBytes(32).toString('hex') }).SECRETS_KEY).toBeDefined();
    expect(configWith({ SECRETS_KEY: randomBytes(32).toString('base64url') }).SECRETS_KEY).toBeDefined();
    for (const bad of ['short', randomBytes(16).toString('hex'), randomBytes(33).toString('base64')]) {
      expect(() => configWith({ SECRETS_KEY: bad })).toThrow(ConfigError);
      expect(() => configWith({ SECRETS_KEY: bad })).toThrow(/SECRETS_KEY: must be 32 bytes/);
    }
  });
});
