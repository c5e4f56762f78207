import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { autocommitWrite } from '../db/engine/index.ts';
import { secretsKeyBytes, type Config } from '../config.ts';

// Secrets kept at rest that must be read back (a stored idempotent response that shows a code or
// a URL once; webhook signing secrets) are sealed with AES-256-GCM under a key derived from
// one master key per purpose (docs/operator-guide.md "Secrets at rest"). The master key is SECRETS_KEY; when it is
// unset, one is generated on first use and kept in the database (`instance_secret`), so every
// process on that database agrees without configuration — a development convenience that protects
// nothing against a copy of the database, which is why production sets SECRETS_KEY.

const SEALED = /^sealed:v1:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/;

/** Sealed text carries the id of the key that sealed it, so a wrong key is named, not guessed. */
export interface SecretBox {
  readonly keyId: string;
  seal(plaintext: string): string;
  /** The plaintext of `sealed`; text that was never sealed (written before sealing existed) is returned as it is. */
  open(sealed: string): string;
}

export function secretBox(master: Buffer, purpose: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `reseller-gateway ${purpose}`, 32));
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    keyId,
    seal(plaintext) {
      const iv = randomBytes(12); // a fresh IV per seal, as GCM requires
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `sealed:v1:${keyId}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed) {
      const m = SEALED.exec(sealed);
      if (!m) return sealed;
      if (m[1] !== keyId) throw new Error(`sealed with key ${m[1]}, not this process's key ${keyId}: is SECRETS_KEY the same everywhere?`);
      const raw = Buffer.from(m[2], 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

const masters = new WeakMap<Config, Promise<Buffer>>();

/** The master key: SECRETS_KEY, else the database's own (created once; concurrent first uses agree). */
export function masterKey(em: EntityManager, config: Config): Promise<Buffer> {
  let key = masters.get(config);
  if (!key) {
    key = config.SECRETS_KEY !== undefined ? Promise.resolve(secretsKeyBytes(config.SECRETS_KEY)!) : databaseKey(em);
    key.catch(() => masters.delete(config)); // a failed read is tried again on the next use
    masters.set(config, key);
  }
  return key;
}

async function databaseKey(em: EntityManager): Promise<Buffer> {
  // A first use racing another process's finds neither row in its snapshot: the next statement sees it.
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await autocommitWrite<{ value: string }>(
      em.fork(),
      `with made as (
         insert into instance_secret (name, value) values ('master', ?) on conflict (name) do nothing returning value
       )
       select value from made union all select value from instance_secret where name = 'master' limit 1`,
      [randomBytes(32).toString('base64')],
    );
    if (row) return Buffer.from(row.value, 'base64');
  }
  throw new Error('instance_secret: no master key after three attempts');
}
