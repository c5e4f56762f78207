import { defineRoutes } from '../../rest/route.ts';
import { getClient } from './get-client.ts';
import { clientSchema, presentClient } from './clients.presenter.ts';

export const clientsRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/clients/{client_id}',
    operationId: 'getClient',
    tag: 'Clients',
    summary:
      "Get a client with its current pass: the reseller's own, or a looked-up client (Service-Lookup-Token, or an active lookup: e-mail masked)",
    takesLookupToken: true,
    success: { status: 200, description: 'A `client`', schema: clientSchema },
    errors: ['validation_error', 'invalid_api_key', 'account_disabled', 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentClient(await getClient(ctx, params.client_id), ctx.clock.now()) };
    },
  },
]);
