import { defineRoutes } from '../../rest/route.ts';
import { corsOriginsInput, getCorsOrigins, setCorsOrigins, type CorsOriginsInput } from './cors-origins.ts';
import { corsOriginsSchema, presentCorsOrigins } from './cors-origins.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;

// A reseller's CORS allow-list for /graphql (docs/partner-guide.md "Calling from a browser"). REST
// itself never answers with CORS headers: only a browser's GraphQL calls with a client session need them.
export const corsOriginsRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/cors_origins',
    operationId: 'getCorsOrigins',
    tag: 'Resellers',
    summary: "The origins whose pages may call /graphql with this reseller's client-session tokens",
    success: { status: 200, description: 'The `cors_origins`', schema: corsOriginsSchema },
    errors: [...authErrors],
    async handler(ctx) {
      return { status: 200, body: presentCorsOrigins(await getCorsOrigins(ctx)) };
    },
  },
  {
    method: 'PUT',
    path: '/cors_origins',
    operationId: 'setCorsOrigins',
    tag: 'Resellers',
    summary:
      'Replace the CORS allow-list for /graphql (at most 20 exact origins; https, or http for localhost and 127.0.0.1); every process answers by it within 1 s',
    body: corsOriginsInput,
    idempotent: true,
    success: { status: 200, description: 'The `cors_origins` as stored', schema: corsOriginsSchema },
    errors: [...authErrors, 'idempotency_key_reused', 'idempotency_request_in_progress'],
    async handler(tx, { body }) {
      return { status: 200, body: presentCorsOrigins(await setCorsOrigins(tx, body as CorsOriginsInput)) };
    },
  },
]);
