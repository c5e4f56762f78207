import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { onceForEvent, subscribeToEvents } from '../../graphql/subscriptions.ts';
import { runMutation, takesLookupToken, forClientSession } from '../../graphql/use-case.ts';
import type { EventType, LiveEvent } from '../events/index.ts';
import { ExtraVisitsDurationEnum } from '../bookings/bookings.graphql.ts';
import { ClientRef } from '../clients/clients.graphql.ts';
import { CopayOptionRef, ProviderRef } from '../providers/providers.graphql.ts';
import { accessCodeStatusAt, accessCodeStatuses, type AccessCode } from './access-codes.entity.ts';
import { getOwnAccessCode } from './access-codes.service.ts';
import { confirmAccessCodeSession } from './confirm-access-code.ts';
import { createAccessCode, type AccessCodeSessionOpened } from './create-access-code.ts';
import type { IssuedAccessCode } from './issue-access-code.ts';

// The GraphQL surface of access codes (docs/partner-guide.md "Access codes"): each mutation calls the use case its
// REST route calls (access-codes.rest.ts) with the same V3 input, and its types read the use case's
// result (the code as issued, or the session opened instead), as access-codes.presenter.ts does for REST.

const AccessCodeStatusEnum = builder.enumType('AccessCodeStatus', {
  description: 'ACTIVE until a provider redeems it (REDEEMED) or its day ends (EXPIRED).',
  values: accessCodeStatuses,
});

const AccessCodeRef = builder.objectRef<IssuedAccessCode>('AccessCode').implement({
  description:
    'A single-use access code for one visit (the V3 `access_code`). `code` and `qrCode` are shown only in the answer that made it.',
  isTypeOf: (value) => (value as Partial<IssuedAccessCode>).accessCode !== undefined,
  fields: (t) => ({
    id: t.id({ description: 'Access code id (`ac_…`).', resolve: (c) => c.accessCode.id }),
    code: t.string({ description: 'The 8-character single-use code (A–Z and 2–9 without 0/O and 1/I).', resolve: (c) => c.code }),
    qrCode: t.string({
      description:
        '`data:image/png;base64,…`: a QR of the signed payload `AC1.<payload>.<signature>` (docs/partner-guide.md "Access codes").',
      resolve: (c) => c.qrCode,
    }),
    client: t.field({
      type: ClientRef,
      description: 'The client the code is for.',
      resolve: (c, _, ctx) => ClientRef.getDataloader(ctx).load(c.accessCode.clientId),
    }),
    issuedPassId: t.id({ description: 'The issued pass whose visit the code holds.', resolve: (c) => c.accessCode.issuedPassId }),
    provider: t.field({
      type: ProviderRef,
      nullable: true,
      description: 'The provider the code is valid at; null: any provider the pass covers (gyms).',
      resolve: (c, _, ctx) => (c.accessCode.providerId ? ProviderRef.getDataloader(ctx).load(c.accessCode.providerId) : null),
    }),
    status: t.field({
      type: AccessCodeStatusEnum,
      description: 'ACTIVE when made.',
      resolve: (c, _, ctx) => accessCodeStatusAt(c.accessCode, ctx.clock.now()),
    }),
    expiresAt: t.field({
      type: 'DateTime',
      description: "End of the local day at the provider (UTC without one), or the pass's expiry when sooner.",
      resolve: (c) => c.accessCode.expiresAt,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was made.', resolve: (c) => c.accessCode.createdAt }),
  }),
});

const AccessCodeSessionRef = builder.objectRef<AccessCodeSessionOpened>('AccessCodeSession').implement({
  description: 'An access code waiting for a co-pay or extra visits (spec 2.4): confirm it with confirmAccessCodeSession.',
  isTypeOf: (value) => (value as Partial<AccessCodeSessionOpened>).session !== undefined,
  fields: (t) => ({
    message: t.string({ description: 'Human-readable result.', resolve: (s) => s.message }),
    copayRequired: t.boolean({
      description: "true: the pass does not cover the provider's tier; confirm with one of `copayOptions`.",
      resolve: (s) => s.copayRequired,
    }),
    additionalVisitsRequired: t.boolean({
      description: "true: the month's visits are used up; confirm with extra visits at `costPerVisit`.",
      resolve: (s) => s.additionalVisitsRequired,
    }),
    sessionId: t.id({ description: 'The session to confirm.', resolve: (s) => s.session.id }),
    sessionExpiresAt: t.field({
      type: 'DateTime',
      description: 'When the session expires (24 hours after it was opened).',
      resolve: (s) => s.session.expiresAt,
    }),
    copayOptions: t.field({
      type: [CopayOptionRef],
      nullable: true,
      description: 'What can be bought, when a co-pay is required; null otherwise.',
      resolve: (s) => (s.copayRequired ? s.copayOptions : null),
    }),
    visitsUsed: t.int({
      nullable: true,
      description: 'Visits used this month, when extra visits are required.',
      resolve: (s) => s.session.visitsUsed,
    }),
    maxVisits: t.int({
      nullable: true,
      description: 'Visits the pass allows a month, when extra visits are required.',
      resolve: (s) => s.session.maxVisits,
    }),
    costPerVisit: t.int({
      nullable: true,
      description: "Price of one extra visit in the reseller's currency (minor units), when extra visits are required.",
      resolve: (s) => s.session.costPerVisit,
    }),
  }),
});

const CreateAccessCodeInputRef = builder.inputType('CreateAccessCodeInput', {
  description: 'Who the code is for and where (V3 POST /access-codes): `clientId` or `passCode` (or both, agreeing).',
  fields: (t) => ({
    passCode: t.string({ description: "The client's issued pass's 8-character passcode." }),
    clientId: t.id({ description: 'The client.' }),
    providerId: t.id({ description: 'The provider the code is for; without it the code is valid at any gym the pass covers.' }),
  }),
});

const ConfirmAccessCodeSessionInputRef = builder.inputType('ConfirmAccessCodeSessionInput', {
  description:
    'An access-code session to confirm (V3 POST /access-codes/{session_id}/confirm): `numberOfVisits` and `duration` ' +
    'for an extra-visits session, `copayPackageId` for a co-pay session.',
  fields: (t) => ({
    sessionId: t.id({ required: true, description: '`sessionId` of the AccessCodeSession.' }),
    numberOfVisits: t.int({ description: 'Extra visits to buy, 1 to 50 (extra-visits sessions).' }),
    duration: t.field({ type: ExtraVisitsDurationEnum, description: 'How long the extra visits stay usable (extra-visits sessions).' }),
    copayPackageId: t.id({ description: 'One of the `copayOptions` the session offered (co-pay sessions).' }),
  }),
});

/** The V3 body as a JSON request would carry it: a field left out or sent as null is absent. */
function body<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null)) as {
    [K in keyof T]?: Exclude<T[K], null>;
  };
}

builder.mutationFields((t) => ({
  createAccessCode: t.errorUnionField({
    types: [AccessCodeRef, AccessCodeSessionRef, ...mutationErrors],
    description:
      'Makes a single-use access code for one visit at `providerId` (or at any gym the pass covers), or opens a session ' +
      'when a co-pay or extra visits must be bought first. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    extensions: { ...takesLookupToken, ...forClientSession('access_code') },
    args: { input: t.arg({ type: CreateAccessCodeInputRef, required: true }) },
    union: { name: 'CreateAccessCodeResult', description: 'The code made now, a session to confirm first, or why neither.' },
    resolve: async (_, { input }, ctx) => {
      const made = await runMutation(ctx, (c) =>
        createAccessCode(c, body({ pass_code: input.passCode, client_id: input.clientId, provider_id: input.providerId })),
      );
      return made.issued ?? made;
    },
  }),
  confirmAccessCodeSession: t.field({
    type: AccessCodeRef,
    description:
      'Confirms an access-code session: buys the extra visits or the co-pay option (debiting the business account) and makes ' +
      'the code, atomically. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    extensions: takesLookupToken,
    args: { input: t.arg({ type: ConfirmAccessCodeSessionInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'ConfirmAccessCodeSessionResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        confirmAccessCodeSession(
          c,
          input.sessionId,
          body({
            number_of_visits: input.numberOfVisits,
            duration: input.duration,
            copay_package_id: input.copayPackageId,
          }),
        ),
      ),
  }),
}));

// Subscription.accessCodeRedeemed ------------------------------------------------------------------

const ACCESS_CODE_REDEEMED = ['access_code.redeemed'] as const satisfies readonly EventType[];

/** A redemption as sent: the event, and the code read with the subscriber's tenancy when it is sent. */
interface Redemption {
  event: LiveEvent;
  code: AccessCode;
}

const AccessCodeRedemptionRef = builder.objectRef<Redemption>('AccessCodeRedemption').implement({
  description: 'A provider redeemed one of your access codes, recording a visit (the event access_code.redeemed).',
  fields: (t) => ({
    eventId: t.id({
      description: 'The event (`evt_…`), also the SSE message `id:`: resume after it with `Last-Event-ID` or `after`.',
      resolve: (r) => r.event.id,
    }),
    occurredAt: t.field({ type: 'DateTime', description: 'When the event was recorded.', resolve: (r) => r.event.occurredAt }),
    accessCodeId: t.id({ description: 'The access code (`ac_…`).', resolve: (r) => r.code.id }),
    status: t.field({
      type: AccessCodeStatusEnum,
      description: 'The code’s status when the event is sent: REDEEMED.',
      resolve: (r, _, ctx) => accessCodeStatusAt(r.code, ctx.clock.now()),
    }),
    client: t.field({
      type: ClientRef,
      description: 'The client whose visit it was.',
      resolve: (r, _, ctx) => ClientRef.getDataloader(ctx).load(r.code.clientId),
    }),
    provider: t.field({
      type: ProviderRef,
      nullable: true,
      description: 'The provider that redeemed it.',
      resolve: (r, _, ctx) => (r.code.redeemedProviderId ? ProviderRef.getDataloader(ctx).load(r.code.redeemedProviderId) : null),
    }),
    redeemedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was redeemed.',
      resolve: (r) => r.code.redeemedAt ?? null,
    }),
  }),
});

builder.subscriptionField('accessCodeRedeemed', (t) =>
  t.field({
    type: AccessCodeRedemptionRef,
    description:
      "Every redemption of this reseller's access codes (a client session's: its own client's), in the order they committed. " +
      'Over Server-Sent Events; each message has `id:` (the event id) to resume with `Last-Event-ID` or `after`.',
    authScopes: { reseller: true },
    extensions: forClientSession('read'),
    args: {
      after: t.arg.id({
        description:
          'Start after this event (`evt_…`, of this caller): the events since are sent first, in order. `Last-Event-ID`, when sent, wins.',
      }),
    },
    subscribe: (_root, { after }, ctx) => subscribeToEvents(ctx, ACCESS_CODE_REDEEMED, after),
    // Each event runs on a context of its own (src/graphql/subscriptions.ts): the code is read as it is now.
    resolve: async (event, _, ctx) => ({ event, code: await onceForEvent(event, ctx, () => getOwnAccessCode(ctx, event.objectId)) }),
  }),
);
