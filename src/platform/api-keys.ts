import { newApiKeySecret } from './crypto.ts';

// What reseller keys (`sk_`) and provider keys (`pk_`) share: how one is made, revoked and listed.
// Each module keeps its own table and owner check (src/modules/resellers, src/modules/providers).

/** A key row's own columns, as both key tables hold them. */
export interface KeyColumns {
  secretHash: string;
  last4: string;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/**
 * A new key: the secret, returned once to show, and the columns to store (its SHA-256 and last
 * four characters, never the secret itself).
 */
export function newKey(prefix: 'sk' | 'pk', at: Date, label?: string): { secret: string; columns: KeyColumns } {
  const { secret, secretHash, last4 } = newApiKeySecret(prefix);
  return { secret, columns: { secretHash, last4, label: label ?? null, createdAt: at, revokedAt: null } };
}

/** Revokes a key; revoking it again keeps the first revocation time. */
export function revokeKey(key: { revokedAt: Date | null | undefined }, at: Date): void {
  key.revokedAt ??= at;
}

/** A key as the operator CLI lists it: never its secret (only a SHA-256 is stored anyway). */
export interface KeyListing {
  id: string;
  label: string | null;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export const keyListing = (k: {
  id: string;
  label?: string | null;
  last4: string;
  createdAt: Date;
  revokedAt?: Date | null;
}): KeyListing => ({
  id: k.id,
  label: k.label ?? null,
  last4: k.last4,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
});
