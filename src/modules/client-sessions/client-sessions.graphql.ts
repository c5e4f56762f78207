import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { forClientSession, nullWhenNotFound, runMutation, runQuery, showsSecretOnce } from '../../graphql/use-case.ts';
import { ClientRef } from '../clients/clients.graphql.ts';
import { createClientSession } from './create-client-session.ts';
import type { ClientSession } from './client-sessions.entity.ts';
import { getCurrentClientSession, getOwnClientSession, revokeClientSession } from './client-sessions.service.ts';

// Client sessions on GraphQL (docs/partner-guide.md "Client sessions"): the use cases of client-sessions.rest.ts.

const ClientSessionScopeEnum = builder.enumType('ClientSessionScope', {
  description: 'What a client-session token may do for its client.',
  values: {
    READ: { value: 'read' as const, description: 'Read the client, its pass, credits and bookings, and the catalogue (always held).' },
    BOOK: { value: 'book' as const, description: 'Book classes and spa slots for the client, and cancel its bookings.' },
    ACCESS_CODE: { value: 'access_code' as const, description: 'Make access codes for the client.' },
  },
});

const ClientSessionRef = builder.objectRef<ClientSession>('ClientSession').implement({
  description: "A short-lived token acting for one client on /graphql, for a partner's frontend (never the token itself).",
  fields: (t) => ({
    id: t.id({ description: 'Client session id (`csess_…`).', resolve: (s) => s.id }),
    client: t.field({
      type: ClientRef,
      description: 'The one client the token acts for.',
      resolve: (s, _, ctx) => ClientRef.getDataloader(ctx).load(s.clientId),
    }),
    scopes: t.field({ type: [ClientSessionScopeEnum], description: 'What the token may do; READ always.', resolve: (s) => s.scopes }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the token stops working.', resolve: (s) => s.expiresAt }),
    revokedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the session was revoked; null before.',
      resolve: (s) => s.revokedAt ?? null,
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
  }),
});

const ClientSessionCreationRef = builder.objectRef<{ session: ClientSession; token: string }>('ClientSessionCreation').implement({
  description: 'A new client session with its token, answered once.',
  fields: (t) => ({
    clientSession: t.field({ type: ClientSessionRef, resolve: (c) => c.session }),
    token: t.string({
      description: 'Send it as `Authorization: Bearer cs_…` to /graphql. Shown once: only its SHA-256 is kept.',
      resolve: (c) => c.token,
    }),
  }),
});

const CreateClientSessionInputRef = builder.inputType('CreateClientSessionInput', {
  fields: (t) => ({
    clientId: t.id({ required: true, description: 'A client of this reseller holding an ACTIVE pass.' }),
    expiresIn: t.int({ description: 'Seconds until the token stops working, 1–3600 (default 900).' }),
    scopes: t.field({
      type: [ClientSessionScopeEnum],
      description: 'What the token may do besides reading (BOOK, ACCESS_CODE); READ is always held.',
    }),
  }),
});

const ClientSessionIdInputRef = builder.inputType('ClientSessionIdInput', {
  fields: (t) => ({ id: t.id({ required: true, description: 'Client session id (`csess_…`).' }) }),
});

builder.queryFields((t) => ({
  clientSession: t.field({
    type: ClientSessionRef,
    nullable: true,
    description: 'A client session of this reseller (never its token); null for any other id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => runQuery(() => getOwnClientSession(ctx, id)).catch(nullWhenNotFound),
  }),
  currentClientSession: t.field({
    extensions: forClientSession('read'),
    type: ClientSessionRef,
    nullable: true,
    description:
      'The session of the client-session token making this request (`Authorization: Bearer cs_…`): the client it acts for, ' +
      'its scopes and expiry, so a frontend can start from the token alone. null for an API key.',
    authScopes: { reseller: true },
    resolve: (_, __, ctx) => runQuery(() => getCurrentClientSession(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  createClientSession: t.field({
    type: ClientSessionCreationRef,
    description:
      "Creates a short-lived token for a partner's frontend, acting for one client within its scopes, and answers it " +
      'once. Takes no Idempotency-Key: the token is never stored.',
    authScopes: { reseller: true },
    extensions: showsSecretOnce,
    args: { input: t.arg({ type: CreateClientSessionInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'CreateClientSessionResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        createClientSession(c, { client_id: input.clientId, expires_in: input.expiresIn ?? undefined, scopes: input.scopes ?? undefined }),
      ),
  }),
  revokeClientSession: t.field({
    type: ClientSessionRef,
    description: 'Revokes a client session: its token is refused within 1 second on every server process. Again: the same answer.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: ClientSessionIdInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'RevokeClientSessionResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => revokeClientSession(c, input.id)),
  }),
}));
