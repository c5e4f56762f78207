import type { Ctx } from '../../platform/request-context.ts';
import type { IssuedPass, PassPackage } from '../passes/passes.entity.ts';
import { PassPackageSchema } from '../passes/passes.entity.ts';
import { findCurrentIssuedPass, getOwnClient } from '../passes/passes.service.ts';
import type { Client } from './clients.entity.ts';

export interface ClientView { client: Client; current?: { issuedPass: IssuedPass; pass: PassPackage } }

/** A client of the caller with its current pass. (Looked-up clients of other resellers come with the lookup issue.) */
export async function getClient(ctx: Ctx, clientId: string): Promise<ClientView> {
  const client = await getOwnClient(ctx, clientId);
  const issuedPass = await findCurrentIssuedPass(ctx.em, client.resellerId, client.id);
  if (!issuedPass) return { client };
  const pass = await ctx.em.findOneOrFail(PassPackageSchema, { id: issuedPass.passId });
  return { client, current: { issuedPass, pass } };
}
