import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// Ids are `<prefix>_<ULID>`: time-ordered, so "newest first" is ORDER BY id DESC and a cursor is an id.
export const idPrefixes = {
  reseller: 'res',
  apiKey: 'key',
  client: 'client',
  pass: 'pass',
  issuedPass: 'ipass',
  provider: 'prov',
  service: 'svc',
  classCategory: 'ccat',
  class: 'class',
  classInstance: 'ci',
  booking: 'booking',
  session: 'sess',
  visitEntitlement: 'vent',
  visitTransaction: 'vtxn',
  providerKey: 'pkey',
  copayOption: 'copay',
  accessCode: 'ac',
  creditPackage: 'cpkg',
  creditPurchase: 'cpur',
  creditTransaction: 'ctxn',
  businessTransaction: 'btxn',
  lookup: 'lookup',
  lookupToken: 'lkpt',
  webhookEndpoint: 'we',
  webhookDelivery: 'whd',
  event: 'evt',
  hostedSession: 'hs',
  trustedDocument: 'tdoc',
  clientSession: 'csess',
  request: 'req',
} as const;

export type IdKind = keyof typeof idPrefixes;
export type IdPrefix = (typeof idPrefixes)[IdKind];

/**
 * ulid's random characters from Node's CSPRNG, a byte each: a byte / 256 is the fraction ulid
 * expects, and its 32-letter alphabet divides 256, so every letter is equally likely. A pool of
 * bytes ahead of it was measured and did not pay for itself (docs/adr/0025-each-engine-part-measured.md).
 */
const nextUlid = monotonicFactory(() => randomBytes(1)[0]! / 256);

export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${idPrefixes[kind]}_${nextUlid(now)}`;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** True when `value` is a well-formed id of this kind (it may still not exist). */
export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const prefix = `${idPrefixes[kind]}_`;
  return value.startsWith(prefix) && ULID.test(value.slice(prefix.length));
}

/** The kind named by an id's prefix, or undefined for anything that is not one of our ids. */
export function idKindOf(value: string): IdKind | undefined {
  const at = value.lastIndexOf('_');
  if (at <= 0 || !ULID.test(value.slice(at + 1))) return undefined;
  const prefix = value.slice(0, at);
  return (Object.keys(idPrefixes) as IdKind[]).find((k) => idPrefixes[k] === prefix);
}
