import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { ClientSchema, type Client } from './clients.entity.ts';

// Other modules reach clients only through this file (README "Module boundaries").
export type { Client } from './clients.entity.ts';

/** A client of the caller's reseller, or null; another reseller's client is not found (no enumeration). */
export async function findOwnClient(ctx: Ctx, clientId: string): Promise<Client | null> {
  const { resellerId } = resellerOf(ctx);
  // A malformed id (path parameters are free text) names nothing: no query.
  return isId('client', clientId) ? ctx.em.findOne(ClientSchema, { id: clientId, resellerId }) : null;
}

/** The same, as a 404 `resource_not_found` (naming `param` when the id came from a body field). */
export async function getOwnClient(ctx: Ctx, clientId: string, param?: string): Promise<Client> {
  const client = await findOwnClient(ctx, clientId);
  if (!client) throw notFound('client', clientId, param);
  return client;
}

export type NewClient = Pick<Client, 'resellerId' | 'firstName' | 'lastName' | 'email' | 'phone' | 'externalId' | 'createdAt'>;

/** A new client with an empty wallet, persisted at the use case's next flush. */
export function createClient(em: EntityManager, c: NewClient): Client {
  return em.create(ClientSchema, { ...c, id: newId('client', c.createdAt.getTime()), creditBalance: 0 });
}
