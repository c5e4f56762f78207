import { z } from 'zod';
import { listEnvelope, listOf } from '../../rest/envelope.ts';
import { defineRoutes } from '../../rest/route.ts';
import { nearFromQuery, nearQuerySchema } from '../../platform/geo.ts';
import { pageArgsFromQuery, pageQuerySchema } from '../../platform/pagination.ts';
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
  {
    method: 'GET',
    path: '/providers',
    operationId: 'listProviders',
    tag: 'Providers',
    paginated: true,
    summary: 'Get providers: newest first, or nearest first (with `distance_km`) within `radius_km` of `lat`+`lon`',
    query: providersQuery,
    success: { status: 200, description: 'A list of `provider` objects', schema: listOf(providerSchema) },
    errors: [...providerErrors, 'invalid_cursor'],
    async handler(ctx, { query }) {
      const filter = parseInput(providerFilterSchema, { category: query.category, tier: query.tier });
      const near = nearFromQuery(query);
      const page = await listProviders(ctx, filter, near, pageArgsFromQuery(query));
      return { status: 200, body: listEnvelope(page, `${BASE}/providers`, 'Providers retrieved successfully', present) };
    },
  },
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
  {
    method: 'GET',
    path: '/passes/{id}/providers',
    operationId: 'listPassProviders',
    tag: 'Providers',
    paginated: true,
    summary: "Get the providers a pass covers (one of its categories has the provider's category and tier), optionally nearest first",
    query: passProvidersQuery,
    success: { status: 200, description: 'A list of `provider` objects', schema: listOf(providerSchema) },
    errors: [...providerErrors, 'invalid_cursor', 'resource_not_found'],
    async handler(ctx, { params, query }) {
      const near = nearFromQuery(query);
      const pageArgs = pageArgsFromQuery(query);
      const pass = await getPass(ctx, params.id);
      const page = await listCoveredProviders(ctx, pass, near, pageArgs);
      return { status: 200, body: listEnvelope(page, `${BASE}/passes/${pass.id}/providers`, 'Providers retrieved successfully', present) };
    },
  },
  {
    method: 'GET',
    path: '/providers/{providerBranchId}/gym-copay-options',
    operationId: 'listGymCopayOptions',
    tag: 'Providers',
    paginated: true,
    summary: "List a provider's gym co-pay options, newest first",
    query: pageQuerySchema,
    success: { status: 200, description: 'A list of co-pay options (spec 2.4)', schema: listOf(copayOptionSchema) },
    errors: [...providerErrors, 'invalid_cursor', 'resource_not_found'],
    async handler(ctx, { params, query }) {
      const page = await listCopayOptions(ctx, params.providerBranchId, pageArgsFromQuery(query));
      return {
        status: 200,
        body: listEnvelope(
          page,
          `${BASE}/providers/${params.providerBranchId}/gym-copay-options`,
          'Co-pay options retrieved successfully',
          presentCopayOption,
        ),
      };
    },
  },
]);
