import { defineRoutes } from '../../rest/route.ts';
import { createHostedSession, createHostedSessionInput, type CreateHostedSessionInput } from './create-hosted-session.ts';
import { getOwnHostedSession } from './hosted-sessions.service.ts';
import {
  hostedSessionCreationSchema,
  hostedSessionSchema,
  presentHostedSession,
  presentHostedSessionCreation,
} from './hosted-sessions.presenter.ts';

// docs/partner-guide.md "Hosted sessions". The page itself is served outside the V3 base (src/modules/hosted-sessions/hosted-page.ts).
export const hostedSessionsRoutes = defineRoutes([
  {
    method: 'POST',
    path: '/hosted_sessions',
    operationId: 'createHostedSession',
    tag: 'Hosted sessions',
    summary:
      'Create a hosted session: a page of this service where one client books a class or a spa slot, or gets an access ' +
      'code, then returns to `return_url`. Its `url` is answered once (an idempotent replay answers it again from a sealed record)',
    body: createHostedSessionInput,
    idempotent: true,
    success: { status: 201, description: 'The OPEN `hosted_session` with its `url`', schema: hostedSessionCreationSchema },
    errors: [
      'validation_error',
      'invalid_api_key',
      'account_disabled',
      'resource_not_found',
      'pass_not_active',
      'idempotency_key_reused',
      'idempotency_request_in_progress',
    ],
    async handler(ctx, { body }) {
      const { session, url } = await createHostedSession(ctx, body as CreateHostedSessionInput);
      return { status: 201, body: presentHostedSessionCreation(session, url, ctx.clock.now()) };
    },
  },
  {
    method: 'GET',
    path: '/hosted_sessions/{id}',
    operationId: 'getHostedSession',
    tag: 'Hosted sessions',
    summary: 'Get a hosted session: its status and, once COMPLETED, the booking or access code the client got (never its URL)',
    success: { status: 200, description: 'A `hosted_session`', schema: hostedSessionSchema },
    errors: ['validation_error', 'invalid_api_key', 'account_disabled', 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentHostedSession(await getOwnHostedSession(ctx, params.id), ctx.clock.now()) };
    },
  },
]);
