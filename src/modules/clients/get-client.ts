import type { Ctx } from '../../platform/request-context.ts';
import { currentPassOf, type IssuedPass, type PassPackage } from '../passes/passes.service.ts';
import { getOwnClient, type Client } from './clients.service.ts';

export interface ClientView { client: Client; current?: { issuedPass: IssuedPass; pass: PassPackage } }

/**
 * A client of the caller with its current pass (GET /clients/{id}). Kept out of clients.service.ts:
 * the passes module builds on clients, so only this read composes the two. (Looked-up clients of
 * other resellers come with the lookup issue.)
 */
export async function getClient(ctx: Ctx, clientId: string): Promise<ClientView> {
  const client = await getOwnClient(ctx, clientId);
  const current = await currentPassOf(ctx.em, client);
  return current ? { client, current } : { client };
}
