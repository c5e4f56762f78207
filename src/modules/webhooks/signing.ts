import { createHmac, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { masterKey, secretBox, type SecretBox } from '../../platform/secrets.ts';

// Standard Webhooks signing (docs/partner-guide.md "Webhooks"): a secret is `whsec_` and the base64 of 32 random
// bytes; a signature is `v1,` and the base64 HMAC-SHA256, keyed with those bytes, of
// `<webhook-id>.<webhook-timestamp>.<body>`. Secrets are kept sealed (docs/operator-guide.md "Secrets at rest"):
// they sign, so they cannot be kept as a hash.

const PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The `webhook-signature` entry of one secret for one message. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

const boxes = new WeakMap<Buffer, SecretBox>();

/** The box webhook secrets are sealed in. */
export async function secretsBox(em: EntityManager, config: Config): Promise<SecretBox> {
  const master = await masterKey(em, config);
  let box = boxes.get(master);
  if (!box) boxes.set(master, (box = secretBox(master, 'webhook secrets')));
  return box;
}
