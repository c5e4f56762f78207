import { builder } from '../../graphql/builder.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { childConnections, connectionCost, nodeOrNull, registerNode, rowsById } from '../../graphql/loaders.ts';
import { runQuery, forClientSession } from '../../graphql/use-case.ts';
import { checkNear, type Near } from '../../platform/geo.ts';
import { pageArgsFromConnection, toConnection, type Page, type PageArgs } from '../../platform/pagination.ts';
import { parseInput } from '../../platform/validation.ts';
import { PassRef, wholePasses } from '../passes/passes.graphql.ts';
import { copayOptionPagesOf } from './copay-options.ts';
import { firstCoveredProviderPages } from './covered-provider-pages.ts';
import { listCoveredProviders, listProviders, providerFilterSchema, type ProviderShape } from './list-providers.ts';
import { CopayOptionSchema, ProviderSchema, providerCategories, type CopayOption, type Provider } from './providers.entity.ts';

// The Provider type; other modules add their fields to it (Provider.services in spa,
// Provider.classes in classes) with builder.objectFields(ProviderRef, …).

export const ProviderCategoryEnum = builder.enumType('ProviderCategory', { values: providerCategories });

const CancellationPolicyRef = builder.objectRef<Provider>('CancellationPolicy').implement({
  fields: (t) => ({
    freeCancellationHours: t.int({
      description: 'Cancelling at least this many hours before the start refunds in full.',
      resolve: (p) => p.freeCancellationHours,
    }),
    lateCancellationRefundPercent: t.int({
      description: 'Share of credits and co-pay refunded for a later cancellation.',
      resolve: (p) => p.lateCancellationRefundPercent,
    }),
  }),
});

export const ProviderRef = builder.loadableNode(builder.objectRef<ProviderShape>('Provider'), {
  description: 'A provider branch: a gym, or a spa (category SPA). The catalogue is shared by all resellers.',
  id: { resolve: (p) => p.id },
  load: rowsById<Provider>(ProviderSchema, 'catalogue', { keptByProcess: true }),
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

registerNode('provider', ProviderRef, { clientSession: true });

export const CopayOptionRef = builder.loadableNode(builder.objectRef<CopayOption>('CopayOption'), {
  description: "A gym co-pay package (spec 2.4): visits at a provider the client's pass does not cover.",
  id: { resolve: (o) => o.id },
  load: rowsById(CopayOptionSchema, 'catalogue'),
  fields: (t) => ({
    provider: t.field({ type: ProviderRef, resolve: (o, _, ctx) => ProviderRef.getDataloader(ctx).load(o.providerId) }),
    name: t.exposeString('name'),
    currency: t.exposeString('currency'),
    tiers: t.stringList({ description: 'Tier labels the option is for.', resolve: (o) => [...o.tiers] }),
    maxVisits: t.exposeInt('maxVisits'),
    visitDurationDays: t.exposeInt('visitDurationDays'),
    clientCopayAmount: t.int({ description: 'Minor units of `currency`.', resolve: (o) => o.clientCopayAmount }),
    clientCopayCredits: t.int({ resolve: (o) => o.clientCopayCredits }),
    createdAt: t.field({ type: 'DateTime', resolve: (o) => o.createdAt }),
  }),
});

registerNode('copayOption', CopayOptionRef, { clientSession: true });

const ProviderCopayOptionsConnection = builder.connectionObject(
  { type: CopayOptionRef, name: 'ProviderCopayOptionsConnection' },
  { name: 'ProviderCopayOptionsConnectionEdge' },
);

builder.objectFields(ProviderRef, (t) => ({
  copayOptions: t.loadable({
    type: ProviderCopayOptionsConnection,
    description: "The provider's gym co-pay options, newest first.",
    byPath: true,
    args: { ...t.arg.connectionArgs() },
    complexity: connectionCost,
    load: childConnections((ctx, providerIds, page) => copayOptionPagesOf(ctx.em, providerIds, page)),
    resolve: (provider) => provider.id,
  }),
}));

export const NearInput = builder.inputType('NearInput', {
  description: 'A point to search around: results come nearest first, each with `distanceKm`.',
  fields: (t) => ({
    lat: t.float({ required: true, description: 'Latitude, -90 to 90.' }),
    lon: t.float({ required: true, description: 'Longitude, -180 to 180.' }),
    radiusKm: t.float({ description: 'Only results within this many kilometres; default 50, at most 500.' }),
  }),
});

type NearArg = { lat: number; lon: number; radiusKm?: number | null } | null | undefined;
/** The GraphQL `near` argument under the same rules as REST's lat/lon/radius_km. */
export const nearOf = (near: NearArg): Near | undefined =>
  near == null
    ? undefined
    : checkNear(near.lat, near.lon, near.radiusKm ?? undefined, { lat: 'near.lat', lon: 'near.lon', radius: 'near.radiusKm' });

builder.queryFields((t) => ({
  providers: t.connection({
    extensions: forClientSession('read'),
    type: ProviderRef,
    description: 'Providers of the catalogue: newest first, or nearest first within `near.radiusKm` when `near` is given.',
    authScopes: { reseller: true },
    args: {
      category: t.arg({ type: ProviderCategoryEnum }),
      tier: t.arg.string({ description: 'A tier label (BRONZE, SILVER, GOLD …), any case.' }),
      near: t.arg({ type: NearInput }),
    },
    complexity: (args) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 }),
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const filter = parseInput(providerFilterSchema, { category: args.category ?? undefined, tier: args.tier ?? undefined });
        const near = nearOf(args.near);
        const page = pageArgsFromConnection(args);
        return toConnection(await listProviders(ctx, filter, near, page), page);
      }),
  }),
  provider: t.field({
    extensions: forClientSession('read'),
    type: ProviderRef,
    nullable: true,
    description: 'A provider; null for an unknown id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => nodeOrNull(ProviderRef, ctx, id),
  }),
}));

const PassProvidersConnection = builder.connectionObject(
  { type: ProviderRef, name: 'PassProvidersConnection' },
  { name: 'PassProvidersConnectionEdge' },
);

/**
 * Pages of the providers each pass covers. First pages come in one statement for all passes
 * (covered-provider-pages.ts); a cursor names one provider, which several passes may cover, so each
 * pass pages its own list from it (rare: a cursor pages the one list it came from).
 */
async function coveredProviderPages(
  ctx: GraphQLContext,
  passIds: readonly string[],
  page: PageArgs,
  near: Near | undefined,
): Promise<Map<string, Page<ProviderShape> | Error>> {
  if (page.startingAfter === undefined && page.endingBefore === undefined) return firstCoveredProviderPages(ctx.em, passIds, near, page);
  const passes = await wholePasses(ctx).loadMany(passIds);
  return new Map(
    await Promise.all(
      passes.map(
        async (pass, i) =>
          [
            passIds[i],
            pass instanceof Error
              ? pass
              : await listCoveredProviders(ctx, pass, near, page).catch((err: unknown) =>
                  err instanceof Error ? err : Promise.reject(err),
                ),
          ] as const,
      ),
    ),
  );
}

builder.objectFields(PassRef, (t) => ({
  providers: t.loadable({
    type: PassProvidersConnection,
    description:
      "Providers the pass covers (one of its categories has the provider's category and tier); nearest first when `near` is given.",
    byPath: true,
    args: { ...t.arg.connectionArgs(), near: t.arg({ type: NearInput }) },
    complexity: connectionCost,
    load: childConnections((ctx, passIds, page, args) => coveredProviderPages(ctx, passIds, page, nearOf(args.near))),
    resolve: (pass) => pass.id,
  }),
}));
