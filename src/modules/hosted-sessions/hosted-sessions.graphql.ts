import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { nullWhenNotFound, runMutation, runQuery } from '../../graphql/use-case.ts';
import { ClientRef } from '../clients/clients.graphql.ts';
import { createHostedSession } from './create-hosted-session.ts';
import { hostedSessionStatus, hostedSessionStatuses, type HostedSession } from './hosted-sessions.entity.ts';
import { getOwnHostedSession } from './hosted-sessions.service.ts';

// Hosted sessions on GraphQL (docs/partner-guide.md "Hosted sessions"): the use case of hosted-sessions.rest.ts.

const HostedSessionModeEnum = builder.enumType('HostedSessionMode', {
  description: 'What the client does on the page.',
  values: {
    BOOKING: { value: 'booking' as const, description: 'Book a class or a spa slot.' },
    ACCESS_CODE: { value: 'access_code' as const, description: 'Get an access code (QR) for a visit.' },
  },
});

const HostedSessionStatusEnum = builder.enumType('HostedSessionStatus', {
  description: 'OPEN (the page works), COMPLETED (the client booked or got a code) or EXPIRED (past `expiresAt` unused).',
  values: hostedSessionStatuses,
});

const HostedSessionRef = builder.objectRef<HostedSession>('HostedSession').implement({
  description: 'A page of this service where one client books or gets an access code, then returns to `returnUrl`.',
  fields: (t) => ({
    id: t.id({ description: 'Hosted session id (`hs_…`).', resolve: (s) => s.id }),
    client: t.field({
      type: ClientRef,
      description: 'The one client the page acts for.',
      resolve: (s, _, ctx) => ClientRef.getDataloader(ctx).load(s.clientId),
    }),
    mode: t.field({ type: HostedSessionModeEnum, resolve: (s) => s.mode }),
    status: t.field({ type: HostedSessionStatusEnum, resolve: (s, _, ctx) => hostedSessionStatus(s, ctx.clock.now()) }),
    returnUrl: t.string({ description: 'Where the page sends the client when done.', resolve: (s) => s.returnUrl }),
    allowCopay: t.boolean({
      description: 'Whether the page may book what the pass does not cover, paying a co-pay from the business account.',
      resolve: (s) => s.allowCopay,
    }),
    maxCopayAmount: t.int({
      nullable: true,
      description: "The largest co-pay the page may take, in minor units of the reseller's currency; null: any.",
      resolve: (s) => s.maxCopayAmount ?? null,
    }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the page stops working.', resolve: (s) => s.expiresAt }),
    completedAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.completedAt ?? null }),
    bookingId: t.id({ nullable: true, description: 'The booking the client made (mode BOOKING).', resolve: (s) => s.bookingId ?? null }),
    accessCodeId: t.id({
      nullable: true,
      description: 'The access code the client got (mode ACCESS_CODE).',
      resolve: (s) => s.accessCodeId ?? null,
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
  }),
});

const HostedSessionCreationRef = builder.objectRef<{ session: HostedSession; url: string }>('HostedSessionCreation').implement({
  description: 'A new hosted session with its URL, answered once.',
  fields: (t) => ({
    hostedSession: t.field({ type: HostedSessionRef, resolve: (c) => c.session }),
    url: t.string({
      description: "The page to send the client to. It holds the session's secret, of which only the SHA-256 is kept.",
      resolve: (c) => c.url,
    }),
  }),
});

const CreateHostedSessionInputRef = builder.inputType('CreateHostedSessionInput', {
  fields: (t) => ({
    clientId: t.id({ required: true, description: 'A client of this reseller holding an ACTIVE pass.' }),
    mode: t.field({ type: HostedSessionModeEnum, required: true }),
    returnUrl: t.string({ required: true, description: 'Where the client is sent when done (absolute http or https URL).' }),
    allowCopay: t.boolean({
      description: 'Let the page book what the pass does not cover, its co-pay debited from the business account (default false).',
    }),
    maxCopayAmount: t.int({
      description: "With allowCopay: the largest co-pay, in minor units of the reseller's currency (default: any).",
    }),
    expiresIn: t.int({ description: 'Seconds until the page stops working, 300–86400 (default 86400).' }),
  }),
});

builder.queryFields((t) => ({
  hostedSession: t.field({
    type: HostedSessionRef,
    nullable: true,
    description: 'A hosted session of this reseller (never its URL); null for any other id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => runQuery(() => getOwnHostedSession(ctx, id)).catch(nullWhenNotFound),
  }),
}));

builder.mutationFields((t) => ({
  createHostedSession: t.field({
    type: HostedSessionCreationRef,
    description: 'Creates a hosted session for one client and answers its URL. Idempotency-Key accepted (a replay answers the same URL).',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: CreateHostedSessionInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'CreateHostedSessionResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        createHostedSession(c, {
          client_id: input.clientId,
          mode: input.mode,
          return_url: input.returnUrl,
          allow_copay: input.allowCopay ?? undefined,
          max_copay_amount: input.maxCopayAmount ?? undefined,
          expires_in: input.expiresIn ?? undefined,
        }),
      ),
  }),
}));
