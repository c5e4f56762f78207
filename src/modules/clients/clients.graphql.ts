import { builder } from '../../graphql/builder.ts';
import { nodeOrNull, registerNode, rowsById } from '../../graphql/loaders.ts';
import { ClientSchema, type Client } from './clients.entity.ts';

export const ClientRef = builder.loadableNode(builder.objectRef<Client>('Client'), {
  description: "A reseller's client.",
  id: { resolve: (c) => c.id },
  load: rowsById(ClientSchema, 'reseller'),
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

registerNode('client', ClientRef);

builder.queryFields((t) => ({
  client: t.field({
    type: ClientRef,
    nullable: true,
    description: 'A client of this reseller; null for an unknown id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => nodeOrNull(ClientRef, ctx, id),
  }),
}));
