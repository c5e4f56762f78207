import { builder, registerNodeType } from '../../graphql/builder.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { inRequestedOrder } from '../../graphql/loaders.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { ProviderSchema, providerCategories, type Provider } from './providers.entity.ts';

// The Provider type; other modules add their fields to it (Provider.services in spa,
// Provider.classes in classes) with builder.objectFields(ProviderRef, …).

export const ProviderCategoryEnum = builder.enumType('ProviderCategory', { values: providerCategories });

async function loadProviders(ctx: GraphQLContext, ids: readonly string[]): Promise<(Provider | Error)[]> {
  resellerOf(ctx); // the catalogue is shared, but only callers acting for a reseller read it
  return inRequestedOrder(ids, await ctx.em.find(ProviderSchema, { id: { $in: [...ids] } }));
}

/** A provider with the distance from the searched point, when the query had one. */
export type ProviderShape = Provider & { distanceM?: number };

const CancellationPolicyRef = builder.objectRef<Provider>('CancellationPolicy').implement({
  fields: (t) => ({
    freeCancellationHours: t.int({ description: 'Cancelling at least this many hours before the start refunds in full.', resolve: (p) => p.freeCancellationHours }),
    lateCancellationRefundPercent: t.int({ description: 'Share of credits and co-pay refunded for a later cancellation.', resolve: (p) => p.lateCancellationRefundPercent }),
  }),
});

export const ProviderRef = builder.loadableNode(builder.objectRef<ProviderShape>('Provider'), {
  description: 'A provider branch: a gym, or a spa (category SPA). The catalogue is shared by all resellers.',
  id: { resolve: (p) => p.id },
  load: (ids: string[], ctx: GraphQLContext) => loadProviders(ctx, ids),
  fields: (t) => ({
    name: t.exposeString('name'),
    category: t.field({ type: ProviderCategoryEnum, resolve: (p) => p.category }),
    tier: t.exposeString('tier'),
    description: t.exposeString('description'),
    address: t.exposeString('address'),
    city: t.exposeString('city'),
    country: t.exposeString('country'),
    lat: t.exposeFloat('lat'),
    lon: t.exposeFloat('lon'),
    timezone: t.exposeString('timezone', { description: 'IANA time zone; dates and times at this provider are local to it.' }),
    cancellationPolicy: t.field({ type: CancellationPolicyRef, resolve: (p) => p }),
    distanceKm: t.float({
      nullable: true,
      description: 'Kilometres from the point searched for; null when the query had none.',
      resolve: (p) => {
        const metres = (p as ProviderShape).distanceM;
        return metres === undefined ? null : Math.round(metres) / 1000;
      },
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.createdAt }),
  }),
});

registerNodeType('provider', 'Provider', (ctx, id) => ProviderRef.getDataloader(ctx).load(id));
