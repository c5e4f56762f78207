import { createContextCache } from '@pothos/core';
import DataLoader from 'dataloader';
import { builder, registerNodeType } from '../../graphql/builder.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { inRequestedOrder } from '../../graphql/loaders.ts';
import { nullWhenNotFound, runQuery } from '../../graphql/use-case.ts';
import { checkNear, type Near } from '../../platform/geo.ts';
import { keysetPage, pageArgsFromConnection, toConnection, type Page } from '../../platform/pagination.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { parseInput } from '../../platform/validation.ts';
import { PassRef } from '../passes/passes.graphql.ts';
import { firstCopayOptionPages } from './copay-options.ts';
import { firstCoveredProviderPages } from './covered-provider-pages.ts';
import { listCoveredProviders, listProviders, providerFilterSchema, type ProviderShape } from './list-providers.ts';
import { CopayOptionSchema, ProviderSchema, providerCategories, type CopayOption, type Provider } from './providers.entity.ts';
import { getProvider } from './providers.service.ts';

// The Provider type; other modules add their fields to it (Provider.services in spa,
// Provider.classes in classes) with builder.objectFields(ProviderRef, …).

export const ProviderCategoryEnum = builder.enumType('ProviderCategory', { values: providerCategories });

async function loadProviders(ctx: GraphQLContext, ids: readonly string[]): Promise<(Provider | Error)[]> {
  resellerOf(ctx); // the catalogue is shared, but only callers acting for a reseller read it
  return inRequestedOrder(ids, await ctx.em.find(ProviderSchema, { id: { $in: [...ids] } }));
}

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

async function loadCopayOptions(ctx: GraphQLContext, ids: readonly string[]): Promise<(CopayOption | Error)[]> {
  resellerOf(ctx);
  return inRequestedOrder(ids, await ctx.em.find(CopayOptionSchema, { id: { $in: [...ids] } }));
}

export const CopayOptionRef = builder.loadableNode(builder.objectRef<CopayOption>('CopayOption'), {
  description: "A gym co-pay package (spec 2.4): visits at a provider the client's pass does not cover.",
  id: { resolve: (o) => o.id },
  load: (ids: string[], ctx: GraphQLContext) => loadCopayOptions(ctx, ids),
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

registerNodeType('copayOption', 'CopayOption', (ctx, id) => CopayOptionRef.getDataloader(ctx).load(id));

// First pages of a child connection for every parent of a request in one statement, one loader
// per page shape (limit, direction, search point), since each selection may ask differently.
const firstPageLoaders = createContextCache(() => new Map<string, DataLoader<string, Page<unknown>>>());
function firstPageLoader<T>(ctx: GraphQLContext, shape: unknown[], load: (parentIds: readonly string[]) => Promise<Map<string, Page<T>>>): DataLoader<string, Page<T>> {
  const loaders = firstPageLoaders(ctx);
  const key = JSON.stringify(shape);
  let loader = loaders.get(key);
  if (!loader) {
    loader = new DataLoader(async (ids: readonly string[]) => {
      const pages = await load(ids);
      return ids.map((id) => pages.get(id)!);
    });
    loaders.set(key, loader);
  }
  return loader as DataLoader<string, Page<T>>;
}

builder.objectFields(ProviderRef, (t) => ({
  copayOptions: t.connection({
    type: CopayOptionRef,
    description: "The provider's gym co-pay options, newest first.",
    complexity: (args) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 }),
    resolve: (provider, args, ctx) => runQuery(async () => {
      const page = pageArgsFromConnection(args);
      // A cursor names one provider's option: only first pages are batched across providers.
      const result = page.startingAfter !== undefined || page.endingBefore !== undefined
        ? await keysetPage(ctx.em, CopayOptionSchema, { providerId: provider.id }, page, 'copayOption')
        : await firstPageLoader(ctx, ['copayOptions', page.limit, page.backward === true], (ids) => firstCopayOptionPages(ctx.em, ids, page)).load(provider.id);
      return toConnection(result, page);
    }),
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
export const nearOf = (near: NearArg): Near | undefined => near == null ? undefined
  : checkNear(near.lat, near.lon, near.radiusKm ?? undefined, { lat: 'near.lat', lon: 'near.lon', radius: 'near.radiusKm' });

builder.queryFields((t) => ({
  providers: t.connection({
    type: ProviderRef,
    description: 'Providers of the catalogue: newest first, or nearest first within `near.radiusKm` when `near` is given.',
    authScopes: { reseller: true },
    args: {
      category: t.arg({ type: ProviderCategoryEnum }),
      tier: t.arg.string({ description: 'A tier label (BRONZE, SILVER, GOLD …), any case.' }),
      near: t.arg({ type: NearInput }),
    },
    complexity: (args) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 }),
    resolve: (_, args, ctx) => runQuery(async () => {
      const filter = parseInput(providerFilterSchema, { category: args.category ?? undefined, tier: args.tier ?? undefined });
      const near = nearOf(args.near);
      const page = pageArgsFromConnection(args);
      return toConnection(await listProviders(ctx, filter, near, page), page);
    }),
  }),
  provider: t.field({
    type: ProviderRef,
    nullable: true,
    description: 'A provider; null for an unknown id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => runQuery(() => getProvider(ctx, id)).catch(nullWhenNotFound),
  }),
}));

builder.objectFields(PassRef, (t) => ({
  providers: t.connection({
    type: ProviderRef,
    description: "Providers the pass covers (one of its categories has the provider's category and tier); nearest first when `near` is given.",
    args: { near: t.arg({ type: NearInput }) },
    complexity: (args) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 }),
    resolve: (pass, args, ctx) => runQuery(async () => {
      const near = nearOf(args.near);
      const page = pageArgsFromConnection(args);
      // A cursor names one pass's provider: only first pages are batched across passes.
      const result = page.startingAfter !== undefined || page.endingBefore !== undefined
        ? await listCoveredProviders(ctx, pass, near, page)
        : await firstPageLoader(ctx, ['passProviders', page.limit, page.backward === true, near ?? null], (ids) => firstCoveredProviderPages(ctx.em, ids, near, page)).load(pass.id);
      return toConnection(result, page);
    }),
  }),
}));
