import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from './clock.ts';
import { DomainError } from './errors.ts';
import { preparedRead } from '../db/engine/index.ts';
import { sha256Hex } from './crypto.ts';
import type { ClientSessionScopeName, KeyCaller, ProviderCaller, ResellerCaller } from './request-context.ts';

/** Reseller keys are `sk_…`, provider keys `pk_…` (docs/partner-guide.md "Provider side"); the prefix says which table holds the hash. */
const API_KEY = /^(sk|pk)_[0-9A-Za-z]{40}$/;

/**
 * How long a process may answer from its key → caller cache. A revoked key or a disabled reseller
 * is refused within this time on every process (the project's rule is "within 1 s"), and a busy
 * key costs one SELECT per interval instead of one per request. Unknown keys are never cached.
 */
export const KEY_CACHE_MS = 500;
const KEY_CACHE_MAX = 10_000;

/**
 * A process cache of what secrets (API keys, lookup tokens, client-session tokens) stand for, by
 * their SHA-256: each verdict `load` found is kept KEY_CACHE_MS of process time (not the domain
 * clock, which tests move); the cache is bounded (full, it is emptied: that only costs one SELECT per
 * secret again); an unknown secret is never cached.
 */
function verdictCache<V>() {
  const entries = new Map<string, { verdict: V; until: number }>();
  return async (hash: string, load: () => Promise<V | undefined>): Promise<V | undefined> => {
    const nowMs = performance.now();
    const entry = entries.get(hash);
    if (entry && entry.until > nowMs) return entry.verdict;
    const verdict = await load();
    if (!verdict) {
      entries.delete(hash);
      return undefined;
    }
    if (entries.size >= KEY_CACHE_MAX) entries.clear();
    entries.set(hash, { verdict, until: nowMs + KEY_CACHE_MS });
    return verdict;
  };
}

export type KeyKind = KeyCaller['kind'];

/** What a key stands for; a disabled reseller's key is remembered as such (and refused with 403). */
type Verdict = { kind: KeyKind; caller: KeyCaller } | { kind: 'reseller'; disabled: true };
const keyVerdicts = verdictCache<Verdict>();

const otherKind: Record<KeyKind, string> = {
  reseller: 'A reseller API key (sk_…) is not accepted here: the provider API (/v3/api/provider) takes a provider key (pk_…)',
  provider: 'A provider API key (pk_…) is not accepted here: the reseller API and GraphQL take a reseller key (sk_…)',
};

/**
 * `Authorization: Bearer sk_…|pk_…` → the caller it acts for, which must be of the kind the surface
 * takes (`accepts`). Keys are compared by SHA-256 only. Missing, malformed, unknown and revoked keys
 * all answer the same 401; a valid key of the other kind is 403 `permission_denied`, checked before
 * the reseller's account state, and before anything runs (docs/errors.md).
 */
export async function authenticate<K extends KeyKind>(
  em: EntityManager,
  authorization: string | undefined,
  accepts: K,
): Promise<Extract<KeyCaller, { kind: K }>> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) {
    throw new DomainError(
      'invalid_api_key',
      authorization ? 'Authorization must be "Bearer <API key>"' : 'No API key: send "Authorization: Bearer <API key>"',
    );
  }
  const secret = match[1];
  if (secret.startsWith('cs_')) throw clientSessionNotHere();
  if (!API_KEY.test(secret)) throw invalidKey();
  const hash = sha256Hex(secret);
  const verdict = await keyVerdicts(hash, () => (secret.startsWith('pk_') ? lookUpProviderKey(em, hash) : lookUpResellerKey(em, hash)));
  if (!verdict) throw invalidKey();
  if (verdict.kind !== accepts) throw new DomainError('permission_denied', otherKind[verdict.kind]);
  if ('disabled' in verdict) throw new DomainError('account_disabled', 'This reseller account is disabled');
  return verdict.caller as Extract<KeyCaller, { kind: K }>;
}

const invalidKey = () => new DomainError('invalid_api_key', 'Invalid API key');
const clientSessionNotHere = () =>
  new DomainError(
    'permission_denied',
    'A client-session token (cs_…) is accepted only on /graphql: the REST APIs take an API key (docs/partner-guide.md "Client sessions")',
  );

async function lookUpResellerKey(em: EntityManager, hash: string): Promise<Verdict | undefined> {
  const [row] = await preparedRead<{
    key_id: string;
    reseller_id: string;
    status: string;
    currency: string;
    per_second: number | null;
    burst: number | null;
  }>(
    em,
    `select k.id as key_id, r.id as reseller_id, r.status, r.currency, r.rate_limit_per_second as per_second, r.rate_limit_burst as burst
       from api_key k join reseller r on r.id = k.reseller_id
      where k.secret_hash = ? and k.revoked_at is null`,
    [hash],
  );
  if (!row) return undefined;
  if (row.status !== 'ACTIVE') return { kind: 'reseller', disabled: true };
  const caller: ResellerCaller = {
    kind: 'reseller',
    resellerId: row.reseller_id,
    apiKeyId: row.key_id,
    currency: row.currency.trim(),
    ...(row.per_second !== null && row.burst !== null ? { rateLimit: { perSecond: row.per_second, burst: row.burst } } : {}),
  };
  return { kind: 'reseller', caller };
}

async function lookUpProviderKey(em: EntityManager, hash: string): Promise<Verdict | undefined> {
  const [row] = await preparedRead<{ key_id: string; provider_id: string }>(
    em,
    'select id as key_id, provider_id from provider_api_key where secret_hash = ? and revoked_at is null',
    [hash],
  );
  if (!row) return undefined;
  const caller: ProviderCaller = { kind: 'provider', providerId: row.provider_id, providerKeyId: row.key_id };
  return { kind: 'provider', caller };
}

/** What a request presents: `Authorization` and `Service-Lookup-Token` as sent (undefined when absent). */
export interface Credentials {
  authorization?: string;
  lookupToken?: string;
}

/** Where a request may authenticate with more than an API key: a Service-Lookup-Token, a client-session token (/graphql only). */
export interface TokenOptions {
  takesLookupToken?: boolean;
  takesClientSession?: boolean;
}

/**
 * The caller of one request (docs/partner-guide.md "Lookup", "Provider side"). Without a Service-Lookup-Token it is
 * the API key's caller (`authenticate`). A token is taken only where the operation declares it
 * (`takesLookupToken`): anywhere else it is 403 `permission_denied` before the key or the token is
 * even read, so nothing runs. Where it is taken, the caller is the reseller that verified the
 * lookup, scoped to its client; with a bearer key as well, both must name that reseller (else 403).
 * `em` is used for plain SQL only, so one entity manager may serve every request (the pipeline's does).
 */
export async function authenticateRequest<K extends KeyKind>(
  em: EntityManager,
  clock: Clock,
  credentials: Credentials,
  accepts: K,
  options: TokenOptions = {},
): Promise<Extract<KeyCaller, { kind: K }>> {
  const session = options.takesClientSession && accepts === 'reseller' ? clientSessionBearer(credentials.authorization) : undefined;
  if (session !== undefined) {
    // A client-session token stands alone: it acts for its one client, a lookup would widen that.
    if (credentials.lookupToken !== undefined) {
      throw new DomainError('permission_denied', 'A client-session token cannot be sent with a Service-Lookup-Token');
    }
    return (await authenticateClientSession(em, clock, session)) as Extract<KeyCaller, { kind: K }>;
  }
  if (credentials.lookupToken === undefined) return authenticate(em, credentials.authorization, accepts);
  if (!options.takesLookupToken || accepts !== 'reseller') {
    throw new DomainError(
      'permission_denied',
      'A Service-Lookup-Token is not accepted on this operation: it authorises only the ' +
        'looked-up client\'s bookings, access codes and reads (docs/partner-guide.md "Lookup")',
    );
  }
  const token = await authenticateLookupToken(em, clock, credentials.lookupToken);
  if (credentials.authorization === undefined) return token as Extract<KeyCaller, { kind: K }>;
  const bearer = await authenticate(em, credentials.authorization, 'reseller');
  if (bearer.resellerId !== token.resellerId) {
    throw new DomainError('permission_denied', 'The API key and the Service-Lookup-Token belong to different resellers');
  }
  return { ...bearer, lookup: token.lookup } as Extract<KeyCaller, { kind: K }>;
}

/** Lookup tokens are `lkpt_` + 40 base62 characters (docs/partner-guide.md "Lookup"). */
const LOOKUP_TOKEN = /^lkpt_[0-9A-Za-z]{40}$/;

/** A token's verdict, cached like a key's; the pass expiry is checked against the clock on every use. */
type TokenVerdict = { caller: ResellerCaller; passExpiresAt: number } | { disabled: true };
const tokenVerdicts = verdictCache<TokenVerdict>();

const invalidToken = () =>
  new DomainError('invalid_lookup_token', 'Invalid Service-Lookup-Token: unknown, or its lookup or pass is no longer active');

/**
 * `Service-Lookup-Token: lkpt_…` → the verifying reseller's caller with the lookup's scope. Valid while
 * the lookup is ACTIVE, the issued pass it was verified against is ACTIVE and unexpired, and its
 * issuer still has lookup enabled; else 401 `invalid_lookup_token`. Compared by SHA-256 only and
 * cached for KEY_CACHE_MS like API keys, so a cancelled pass or a disabled issuer is refused within 1 s.
 */
async function authenticateLookupToken(em: EntityManager, clock: Clock, token: string): Promise<ResellerCaller> {
  if (!LOOKUP_TOKEN.test(token.trim())) throw invalidToken();
  const hash = sha256Hex(token.trim());
  const verdict = await tokenVerdicts(hash, () => lookUpLookupToken(em, hash));
  if (!verdict) throw invalidToken();
  if ('disabled' in verdict) throw new DomainError('account_disabled', 'This reseller account is disabled');
  if (verdict.passExpiresAt <= clock.now().getTime()) throw invalidToken();
  return verdict.caller;
}

async function lookUpLookupToken(em: EntityManager, hash: string): Promise<TokenVerdict | undefined> {
  const [row] = await preparedRead<{
    lookup_id: string;
    reseller_id: string;
    status: string;
    currency: string;
    client_id: string;
    issuer_id: string;
    issued_pass_id: string;
    pass_status: string;
    pass_expires_at: Date;
    issuer_enabled: boolean;
    issuer_status: string;
  }>(
    em,
    `select l.id as lookup_id, l.reseller_id, r.status, r.currency, l.client_id, l.issuer_id, l.issued_pass_id,
            ip.status as pass_status, ip.expires_at as pass_expires_at, i.lookup_enabled as issuer_enabled, i.status as issuer_status
       from lookup l
       join reseller r on r.id = l.reseller_id
       join reseller i on i.id = l.issuer_id
       join issued_pass ip on ip.id = l.issued_pass_id
      where l.token_hash = ? and l.status = 'ACTIVE'`,
    [hash],
  );
  if (!row || row.pass_status !== 'ACTIVE' || !row.issuer_enabled || row.issuer_status !== 'ACTIVE') return undefined;
  if (row.status !== 'ACTIVE') return { disabled: true };
  const caller: ResellerCaller = {
    kind: 'reseller',
    resellerId: row.reseller_id,
    apiKeyId: null,
    currency: row.currency.trim(),
    lookup: { lookupId: row.lookup_id, clientId: row.client_id, clientResellerId: row.issuer_id, issuedPassId: row.issued_pass_id },
  };
  return { caller, passExpiresAt: new Date(row.pass_expires_at).getTime() };
}

/** The `cs_…` of `Authorization: Bearer cs_…`, or undefined when the bearer is something else (an API key). */
function clientSessionBearer(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(cs_\S*)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/** Client-session tokens are `cs_` + 40 base62 characters (docs/partner-guide.md "Client sessions"). */
const CLIENT_SESSION_TOKEN = /^cs_[0-9A-Za-z]{40}$/;

/** A client-session token's verdict, cached like a key's; its expiry is checked against the clock on every use. */
type SessionVerdict = { caller: ResellerCaller; expiresAt: number } | { disabled: true };
const sessionVerdicts = verdictCache<SessionVerdict>();

const invalidSession = () => new DomainError('invalid_client_session', 'Invalid client-session token: unknown, expired or revoked');

/**
 * `Authorization: Bearer cs_…` (on /graphql only) → its reseller's caller, scoped to the session's
 * one client and scopes (docs/partner-guide.md "Client sessions"). Valid until `expires_at` by the
 * domain clock and while not revoked; else 401 `invalid_client_session`; a disabled reseller is 403.
 * Compared by SHA-256 only and cached for KEY_CACHE_MS like API keys, so a revoke is refused within
 * 1 s on every process. The caller has no API key (`apiKeyId` null): its requests count in the
 * session's own rate-limit bucket.
 */
async function authenticateClientSession(em: EntityManager, clock: Clock, token: string): Promise<ResellerCaller> {
  if (!CLIENT_SESSION_TOKEN.test(token)) throw invalidSession();
  const hash = sha256Hex(token);
  const verdict = await sessionVerdicts(hash, () => lookUpClientSession(em, hash));
  if (!verdict) throw invalidSession();
  if ('disabled' in verdict) throw new DomainError('account_disabled', 'This reseller account is disabled');
  if (verdict.expiresAt <= clock.now().getTime()) throw invalidSession();
  return verdict.caller;
}

async function lookUpClientSession(em: EntityManager, hash: string): Promise<SessionVerdict | undefined> {
  const [row] = await preparedRead<{
    session_id: string;
    client_id: string;
    scopes: ClientSessionScopeName[];
    expires_at: Date;
    reseller_id: string;
    status: string;
    currency: string;
    per_second: number | null;
    burst: number | null;
  }>(
    em,
    `select s.id as session_id, s.client_id, s.scopes, s.expires_at, r.id as reseller_id, r.status, r.currency,
            r.rate_limit_per_second as per_second, r.rate_limit_burst as burst
       from client_session s join reseller r on r.id = s.reseller_id
      where s.token_hash = ? and s.revoked_at is null`,
    [hash],
  );
  if (!row) return undefined;
  if (row.status !== 'ACTIVE') return { disabled: true };
  const caller: ResellerCaller = {
    kind: 'reseller',
    resellerId: row.reseller_id,
    apiKeyId: null,
    currency: row.currency.trim(),
    clientSession: { sessionId: row.session_id, clientId: row.client_id, scopes: row.scopes },
    ...(row.per_second !== null && row.burst !== null ? { rateLimit: { perSecond: row.per_second, burst: row.burst } } : {}),
  };
  return { caller, expiresAt: new Date(row.expires_at).getTime() };
}
