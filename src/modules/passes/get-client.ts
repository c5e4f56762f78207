import type { Ctx } from '../../platform/request-context.ts';
import { getReadableClient, type Client } from '../clients/index.ts';
import { currentPassOf, type IssuedPass, type PassPackage } from './passes.service.ts';

/** `foreign`: another reseller's client, read through a lookup (docs/partner-guide.md "Lookup"): contact details are masked. */
export interface ClientView {
  client: Client;
  foreign: boolean;
  current?: { issuedPass: IssuedPass; pass: PassPackage };
}

/**
 * A client the caller may read with its current pass (GET /clients/{id}): its own, or a looked-up
 * client of another reseller (docs/partner-guide.md "Lookup"). It lives in the passes module, which builds on
 * clients: the clients module never reads passes, so the two do not depend on each other.
 */
export async function getClient(ctx: Ctx, clientId: string): Promise<ClientView> {
  const { client, foreign } = await getReadableClient(ctx, clientId);
  const current = await currentPassOf(ctx.em, client);
  return current ? { client, foreign, current } : { client, foreign };
}
