import { z } from 'zod';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import { nearFromQuery, nearQuerySchema } from '../../platform/geo.ts';
import { pageQuerySchema } from '../../platform/pagination.ts';
import { parseInput } from '../../platform/validation.ts';
import { getPass } from '../passes/index.ts';
import { listCopayOptions } from './copay-options.ts';
import { listCoveredProviders, listProviders, providerFilterSchema, type ProviderShape } from './list-providers.ts';
import { copayOptionSchema, presentCopayOption, presentProvider, providerSchema } from './providers.presenter.ts';
import { getProvider } from './providers.service.ts';

const BASE = '/v3/api/business/reseller';
const providerErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

const providersQuery = z.object({ ...pageQuerySchema.shape, ...nearQuerySchema.shape, ...providerFilterSchema.shape });
const passProvidersQuery = z.object({ ...pageQuerySchema.shape, ...nearQuerySchema.shape });

const present = (p: ProviderShape) => presentProvider(p, p.distanceM);

export const providersRoutes = defineRoutes([
  listRoute({
    path: '/providers',
    operationId: 'listProviders',
    tag: 'Providers',
    summary: 'Get providers: newest first, or nearest first (with `distance_km`) within `radius_km` of `lat`+`lon`',
    query: providersQuery,
    item: providerSchema,
    description: 'A list of `provider` objects',
    errors: [...providerErrors],
    url: () => `${BASE}/providers`,
    message: 'Providers retrieved successfully',
    list: (ctx, page, { query }) => {
      const filter = parseInput(providerFilterSchema, { category: query.category, tier: query.tier });
      return listProviders(ctx, filter, nearFromQuery(query), page);
    },
    present: present,
  }),
  {
    method: 'GET',
    path: '/providers/{id}',
    operationId: 'getProvider',
    tag: 'Providers',
    summary: 'Get one provider',
    success: { status: 200, description: 'A `provider` object', schema: providerSchema },
    errors: [...providerErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentProvider(await getProvider(ctx, params.id)) };
    },
  },
  listRoute({
    path: '/passes/{id}/providers',
    operationId: 'listPassProviders',
    tag: 'Providers',
    summary: "Get the providers a pass covers (one of its categories has the provider's category and tier), optionally nearest first",
    query: passProvidersQuery,
    item: providerSchema,
    description: 'A list of `provider` objects',
    errors: [...providerErrors, 'resource_not_found'],
    url: (params) => `${BASE}/passes/${params.id}/providers`,
    message: 'Providers retrieved successfully',
    list: async (ctx, page, { params, query }) => {
      const near = nearFromQuery(query);
      return listCoveredProviders(ctx, await getPass(ctx, params.id), near, page);
    },
    present: present,
  }),
  listRoute({
    path: '/providers/{providerBranchId}/gym-copay-options',
    operationId: 'listGymCopayOptions',
    tag: 'Providers',
    summary: "List a provider's gym co-pay options, newest first",
    item: copayOptionSchema,
    description: 'A list of co-pay options (spec 2.4)',
    errors: [...providerErrors, 'resource_not_found'],
    url: (params) => `${BASE}/providers/${params.providerBranchId}/gym-copay-options`,
    message: 'Co-pay options retrieved successfully',
    list: (ctx, page, { params }) => listCopayOptions(ctx, params.providerBranchId, page),
    present: presentCopayOption,
  }),
]);
