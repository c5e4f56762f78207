import { builder, registerNodeType } from '../../graphql/builder.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { nullWhenNotFound, runQuery } from '../../graphql/use-case.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { inRequestedOrder } from '../../graphql/loaders.ts';
import { ClientSchema, type Client } from './clients.entity.ts';
import { getOwnClient } from './clients.service.ts';

export async function loadClients(ctx: GraphQLContext, ids: readonly string[]): Promise<(Client | Error)[]> {
  const { resellerId } = resellerOf(ctx);
  return inRequestedOrder(ids, await ctx.em.find(ClientSchema, { id: { $in: [...ids] }, resellerId }));
}

export const ClientRef = builder.loadableNode(builder.objectRef<Client>('Client'), {
  description: "A reseller's client.",
  id: { resolve: (c) => c.id },
  load: (ids: string[], ctx: GraphQLContext) => loadClients(ctx, ids),
  fields: (t) => ({
    firstName: t.exposeString('firstName'),
    lastName: t.exposeString('lastName'),
    email: t.exposeString('email'),
    phone: t.exposeString('phone', { nullable: true }),
    externalId: t.exposeString('externalId', { nullable: true }),
    creditBalance: t.int({ description: 'Credits in the client wallet.', resolve: (c) => c.creditBalance }),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.createdAt }),
  }),
});

registerNodeType('client', 'Client', (ctx, id) => ClientRef.getDataloader(ctx).load(id));

builder.queryFields((t) => ({
  client: t.field({
    type: ClientRef,
    nullable: true,
    description: 'A client of this reseller; null for an unknown id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => runQuery(() => getOwnClient(ctx, id))
      .catch(nullWhenNotFound),
  }),
}));
