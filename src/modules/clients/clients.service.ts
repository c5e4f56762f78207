import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, notFound } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { joinedColumns, plainJoined, plainRows, preparedRead, type Plain } from '../../db/engine/index.ts';
import { clientSessionOf, lookupScopeOf, resellerOf, type Ctx } from '../../platform/request-context.ts';
import { ClientSchema, type Client } from './clients.entity.ts';

// Other modules reach clients only through this file (docs/architecture.md "Module boundaries"). It is also the
// one place a client is resolved for a caller, lookups included (docs/partner-guide.md "Lookup"): a token caller
// names only its looked-up client; a reseller holding an active lookup reads that client, masked. A
// client-session token (docs/partner-guide.md "Client sessions") likewise names only its one client.
export type { Client } from './clients.entity.ts';

/** 403 for a Service-Lookup-Token naming anything but its own client (docs/partner-guide.md "Lookup"); nothing runs on. */
export function notTheLookedUpClient(): DomainError {
  return new DomainError('permission_denied', 'This Service-Lookup-Token acts only for the client it was verified for');
}

/** 403 for a client-session token naming anything but its one client (docs/partner-guide.md "Client sessions"). */
export function notTheSessionsClient(): DomainError {
  return new DomainError('permission_denied', 'This client-session token acts only for the client it was created for');
}

/**
 * The one client a token caller acts for, and that client's reseller: a lookup token's (a client of
 * the issuer) or a client session's (its reseller's own); undefined for an API key alone.
 */
function tokenClientOf(ctx: Ctx): { clientId: string; clientResellerId: string; refusal: () => DomainError } | undefined {
  const lookup = lookupScopeOf(ctx);
  if (lookup) return { clientId: lookup.clientId, clientResellerId: lookup.clientResellerId, refusal: notTheLookedUpClient };
  const session = clientSessionOf(ctx);
  if (session) return { clientId: session.clientId, clientResellerId: resellerOf(ctx).resellerId, refusal: notTheSessionsClient };
  return undefined;
}

/**
 * A client of the caller's reseller, or null; another reseller's client is not found (no enumeration).
 * A lookup token caller resolves only its looked-up client (a client of the issuer); any other id is 403.
 */
export async function findOwnClient(ctx: Ctx, clientId: string): Promise<Client | null> {
  return findClientOf(ctx.em, ownClientsReseller(ctx, clientId), clientId);
}

/**
 * The reseller whose client `clientId` must be for this caller to act for it (findOwnClient's rule,
 * for a statement that reads the client with more): the caller's own, or a lookup token's client's
 * issuer; a token naming another client is 403.
 */
export function ownClientsReseller(ctx: Ctx, clientId: string): string {
  const scope = tokenClientOf(ctx);
  if (!scope) return resellerOf(ctx).resellerId;
  if (clientId !== scope.clientId) throw scope.refusal();
  return scope.clientResellerId;
}

/**
 * The client columns of a statement joining `client` as `alias` to other rows, and the client of
 * such a row as a plain object (src/db/engine/plain-rows.ts): the statements that read a client this
 * way (a booking's holder, an access code's) never write it; a wallet moves by SQL. Undefined when
 * the row has none.
 */
export const joinedClientColumns = (em: EntityManager, alias: string): string => joinedColumns(em, ClientSchema, alias);
export function joinedClient(em: EntityManager, alias: string, row: Record<string, unknown>): Plain<Client> | undefined {
  return plainJoined(em, ClientSchema, alias, [row])[0];
}

/** The same, as a 404 `resource_not_found` (naming `param` when the id came from a body field). */
export async function getOwnClient(ctx: Ctx, clientId: string, param?: string): Promise<Client> {
  const client = await findOwnClient(ctx, clientId);
  if (!client) throw notFound('client', clientId, param);
  return client;
}

/**
 * Which foreign clients a reseller may read: those it holds an active lookup of. The lookups module
 * states it (registered at its load, as bookings register spa intervals), so this module needs no
 * import of it: an SQL condition on a client row (`alias`), so a read of own and looked-up clients
 * stays one statement. Unregistered, no foreign client is readable.
 */
export interface ClientReadGrant {
  condition(alias: string): string;
  params(resellerId: string, now: Date): unknown[];
}
let readGrant: ClientReadGrant = { condition: () => 'false', params: () => [] };
export function grantClientReads(grant: ClientReadGrant): void {
  readGrant = grant;
}

/** A client a caller may read, and whether it is another reseller's (read through a lookup: contact details masked). */
export interface ReadableClient {
  client: Client;
  foreign: boolean;
}

/**
 * The reads of a client (GET /clients/{id}, its credits): the caller's own client, a lookup token's
 * client, or, with a bearer key alone, a client of another reseller the caller holds an active lookup
 * of (docs/partner-guide.md "Lookup"). Anything else is 404, as for another reseller's client.
 */
export async function getReadableClient(ctx: Ctx, clientId: string): Promise<ReadableClient> {
  const { resellerId } = resellerOf(ctx);
  if (tokenClientOf(ctx)) {
    const client = await getOwnClient(ctx, clientId);
    return { client, foreign: client.resellerId !== resellerId };
  }
  const [client] = await readableClients(ctx, [clientId]);
  if (!client) throw notFound('client', clientId);
  return { client, foreign: client.resellerId !== resellerId };
}

/**
 * The clients of `ids` this caller may read, in one statement: the GraphQL Client loader's rows. A
 * token (lookup, client session) reads only its client; other ids are left out. Plain rows
 * (src/db/engine/plain-rows.ts): its readers only present them.
 */
export async function readableClients(ctx: Ctx, ids: readonly string[]): Promise<Plain<Client>[]> {
  const scope = tokenClientOf(ctx);
  const wanted = [...new Set(ids.filter((id) => isId('client', id) && (!scope || id === scope.clientId)))];
  if (wanted.length === 0) return [];
  const readable = readableClientSql(ctx, 'c');
  const rows = await preparedRead<Record<string, unknown>>(
    ctx.em,
    `select c.* from client c where c.id in (select jsonb_array_elements_text(?::jsonb)) and ${readable.sql}`,
    [JSON.stringify(wanted), ...readable.params],
  );
  return plainRows(ctx.em, ClientSchema, rows);
}

/**
 * The condition a client row (`alias`) meets when this caller may read it, for reads that stay one
 * statement (a wallet with its client): the caller's own, a lookup token's client, or a client of
 * an active lookup. With a token, name its client first (checkLookedUpClient answers 403 for another).
 */
export function readableClientSql(ctx: Ctx, alias: string): { sql: string; params: unknown[] } {
  const scope = tokenClientOf(ctx);
  if (scope) return { sql: `(${alias}.id = ? and ${alias}.reseller_id = ?)`, params: [scope.clientId, scope.clientResellerId] };
  const { resellerId } = resellerOf(ctx);
  return {
    sql: `(${alias}.reseller_id = ? or ${readGrant.condition(alias)})`,
    params: [resellerId, ...readGrant.params(resellerId, ctx.clock.now())],
  };
}

/** 403 unless a token caller (lookup, client session) names its own client; nothing for other callers. */
export function checkLookedUpClient(ctx: Ctx, clientId: string): void {
  const scope = tokenClientOf(ctx);
  if (scope && clientId !== scope.clientId) throw scope.refusal();
}

/**
 * A client of a given reseller, or null: the lookups module finds an issuer's client with it (docs/partner-guide.md
 * "Lookup"). It checks no caller: the use case decides who may learn of the client, and how.
 */
export async function findClientOf(em: EntityManager, resellerId: string, clientId: string): Promise<Client | null> {
  // A malformed id (path parameters are free text) names nothing: no query. A prepared statement
  // mapped into the entity manager: every booking reads its client, and a find builds a query each time.
  if (!isId('client', clientId)) return null;
  const [row] = await preparedRead<Record<string, unknown>>(em, 'select * from client where id = ? and reseller_id = ?', [
    clientId,
    resellerId,
  ]);
  return row ? em.map(ClientSchema, row) : null;
}

/** The reseller whose client this is: the wallet's owner, whoever booked (docs/partner-guide.md "Lookup"). */
export async function walletResellerOf(em: EntityManager, clientId: string): Promise<string> {
  const [row] = await preparedRead<{ reseller_id: string }>(em, 'select reseller_id from client where id = ?', [clientId]);
  if (!row) throw new Error(`no client ${clientId}`);
  return row.reseller_id;
}

/** `ada@example.com` → `a***@example.com`: enough to recognise, not to write to. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

/** Only the last two digits of a phone number. */
export function maskPhone(phone: string): string {
  return `***${phone.replace(/[^0-9]/g, '').slice(-2)}`;
}

export type NewClient = Pick<Client, 'resellerId' | 'firstName' | 'lastName' | 'email' | 'phone' | 'externalId' | 'createdAt'>;

/** A new client with an empty wallet, persisted at the use case's next flush. */
export function createClient(em: EntityManager, c: NewClient): Client {
  return em.create(ClientSchema, { ...c, id: newId('client', c.createdAt.getTime()), creditBalance: 0 });
}
