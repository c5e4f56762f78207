import type { Ctx } from '../../platform/request-context.ts';
import { currentPassOf, type IssuedPass, type PassPackage } from '../passes/index.ts';
import { getReadableClient, type Client } from './clients.service.ts';

/** `foreign`: another reseller's client, read through a lookup (docs/partner-guide.md "Lookup"): contact details are masked. */
export interface ClientView {
  client: Client;
  foreign: boolean;
  current?: { issuedPass: IssuedPass; pass: PassPackage };
}

/**
 * A client the caller may read with its current pass (GET /clients/{id}): its own, or a looked-up
 * client of another reseller (docs/partner-guide.md "Lookup"). Kept out of clients.service.ts: the passes module
 * builds on clients, so only this read composes the two.
 */
export async function getClient(ctx: Ctx, clientId: string): Promise<ClientView> {
  const { client, foreign } = await getReadableClient(ctx, clientId);
  const current = await currentPassOf(ctx.em, client);
  return current ? { client, foreign, current } : { client, foreign };
}
