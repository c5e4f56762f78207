import { builder } from '../../graphql/builder.ts';
import { inRequestedOrder, nodeOrNull, registerNode } from '../../graphql/loaders.ts';
import { takesLookupToken, forClientSession } from '../../graphql/use-case.ts';
import { readAlong } from '../../graphql/read-along.ts';
import { clientSessionOf, resellerOf } from '../../platform/request-context.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { checkLookedUpClient, maskEmail, maskPhone, readableClients, type Client } from './clients.service.ts';

/** Another reseller's client, read through a lookup (docs/partner-guide.md "Lookup"): its contact details are masked. */
const foreign = (c: Client, ctx: GraphQLContext) => c.resellerId !== resellerOf(ctx).resellerId;

export const ClientRef = builder.loadableNode(builder.objectRef<Client>('Client'), {
  description: "A reseller's client, or a client of another reseller it holds an active lookup of (contact details masked).",
  id: { resolve: (c) => c.id },
  // The reseller's own clients, a lookup token's client, and clients of active lookups (clients.service.ts).
  load: async (ids: readonly string[], ctx: GraphQLContext) => inRequestedOrder(ids, await readableClients(ctx, ids)),
  fields: (t) => ({
    firstName: t.exposeString('firstName'),
    lastName: t.exposeString('lastName'),
    email: t.string({
      description: "E-mail address; masked (`a***@example.com`) for another reseller's client.",
      resolve: (c, _, ctx) => (foreign(c, ctx) ? maskEmail(c.email) : c.email),
    }),
    phone: t.string({
      nullable: true,
      description: "Phone number; only its last two digits for another reseller's client.",
      resolve: (c, _, ctx) => (c.phone == null ? null : foreign(c, ctx) ? maskPhone(c.phone) : c.phone),
    }),
    externalId: t.string({
      nullable: true,
      description: "The reseller's own id for the client; null for another reseller's client.",
      resolve: (c, _, ctx) => (foreign(c, ctx) ? null : (c.externalId ?? null)),
    }),
    creditBalance: t.int({ description: 'Credits in the client wallet.', resolve: (c) => c.creditBalance }),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.createdAt }),
  }),
});

registerNode('client', ClientRef, { clientSession: true });

builder.queryFields((t) => ({
  client: t.field({
    type: ClientRef,
    nullable: true,
    description: 'A client of this reseller, or a looked-up client (Service-Lookup-Token, or an active lookup); null for an unknown id.',
    authScopes: { reseller: true },
    extensions: { ...takesLookupToken, ...forClientSession('read') },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_, { id }, ctx, info) => {
      // A client-session token naming another client is 403, not null (docs/partner-guide.md "Client sessions").
      if (clientSessionOf(ctx)) checkLookedUpClient(ctx, id);
      // Its bookings' first page, when asked, in the client's statement (src/graphql/read-along.ts).
      await readAlong(ClientRef, ctx, id, info);
      return nodeOrNull(ClientRef, ctx, id);
    },
  }),
}));
