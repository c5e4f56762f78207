import { defineRoutes } from '../../rest/route.ts';
import { createClientSession, createClientSessionInput, type CreateClientSessionInput } from './create-client-session.ts';
import { getOwnClientSession, revokeClientSession } from './client-sessions.service.ts';
import {
  clientSessionCreationSchema,
  clientSessionSchema,
  presentClientSession,
  presentClientSessionCreation,
} from './client-sessions.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled', 'permission_denied'] as const;

// docs/partner-guide.md "Client sessions". Made by the reseller's server with its API key; the token
// itself is taken on /graphql only (every route here answers it 403 permission_denied).
export const clientSessionsRoutes = defineRoutes([
  {
    method: 'POST',
    path: '/client_sessions',
    operationId: 'createClientSession',
    tag: 'Client sessions',
    summary:
      "Create a client session: a short-lived token (`cs_…`) for a partner's frontend, acting on /graphql for one client " +
      'within its scopes. The token is answered once (no Idempotency-Key: it is never stored)',
    body: createClientSessionInput,
    success: { status: 201, description: 'The `client_session` with its `token`', schema: clientSessionCreationSchema },
    errors: [...authErrors, 'resource_not_found', 'pass_not_active'],
    async handler(ctx, { body }) {
      const { session, token } = await createClientSession(ctx, body as CreateClientSessionInput);
      return { status: 201, body: presentClientSessionCreation(session, token) };
    },
  },
  {
    method: 'GET',
    path: '/client_sessions/{id}',
    operationId: 'getClientSession',
    tag: 'Client sessions',
    summary: 'Get a client session (never its token)',
    success: { status: 200, description: 'A `client_session`', schema: clientSessionSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentClientSession(await getOwnClientSession(ctx, params.id)) };
    },
  },
  {
    method: 'DELETE',
    path: '/client_sessions/{id}',
    operationId: 'revokeClientSession',
    tag: 'Client sessions',
    summary:
      'Revoke a client session: its token is refused within 1 second on every server process. Revoking it again answers ' +
      'the same session, its first `revoked_at` kept',
    success: { status: 200, description: 'The `client_session` with `revoked_at`', schema: clientSessionSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentClientSession(await revokeClientSession(ctx, params.id)) };
    },
  },
]);
