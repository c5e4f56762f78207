import { builder } from '../../graphql/builder.ts';
import { mutationErrors, toGraphQLError } from '../../graphql/errors.ts';
import { nullWhenNotFound, runMutation, runQuery, showsSecretOnce } from '../../graphql/use-case.ts';
import { getOwnLookup, lookupStatus, presentedLookupStatuses, type LookupView } from './lookups.service.ts';
import { startLookup } from './start-lookup.ts';
import { verifyLookup } from './verify-lookup.ts';
import { setLookupEnabled } from './lookup-settings.ts';
import { getOwnReseller, type Reseller } from '../resellers/index.ts';

// Lookups on GraphQL (docs/partner-guide.md "Lookup"): the same use cases as lookups.rest.ts.

const LookupStatusEnum = builder.enumType('LookupStatus', {
  description:
    'PENDING (code mailed), ACTIVE (verified; its token works), FAILED (no attempts left), EXPIRED (unverified after ' +
    '15 minutes, or its token no longer works) or REVOKED (its issuer turned lookup off: for good).',
  values: presentedLookupStatuses,
});

const LookupRef = builder.objectRef<LookupView>('Lookup').implement({
  description: "A request to act for another reseller's client, verified by a code mailed to the client. It names the client by id only.",
  fields: (t) => ({
    id: t.id({ resolve: (v) => v.lookup.id }),
    status: t.field({ type: LookupStatusEnum, resolve: (v, _, ctx) => lookupStatus(v, ctx.clock.now()) }),
    issuerId: t.id({ description: "The client's reseller.", resolve: (v) => v.lookup.issuerId }),
    clientId: t.id({ description: 'The client looked up.', resolve: (v) => v.lookup.clientId }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the mailed code stops working.', resolve: (v) => v.lookup.expiresAt }),
    attemptsRemaining: t.int({ description: 'Wrong codes this lookup still takes.', resolve: (v) => v.lookup.attemptsRemaining }),
    tokenExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: "Once verified, when the lookup token stops working (the client's pass expiry); null before.",
      resolve: (v) => (v.lookup.status === 'ACTIVE' ? v.passExpiresAt : null),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (v) => v.lookup.createdAt }),
  }),
});

const LookupVerificationRef = builder.objectRef<{ view: LookupView; token: string }>('LookupVerification').implement({
  description: 'A verified lookup with its token, answered once.',
  fields: (t) => ({
    lookup: t.field({ type: LookupRef, resolve: (r) => r.view }),
    lookupToken: t.string({
      description: 'Send as the `Service-Lookup-Token` header (docs/partner-guide.md "Lookup"). Shown once: only its SHA-256 is kept.',
      resolve: (r) => r.token,
    }),
  }),
});

const StartLookupInputRef = builder.inputType('StartLookupInput', {
  fields: (t) => ({
    issuerId: t.id({ required: true, description: 'The reseller that issued the client its pass (`issuers`).' }),
    clientId: t.id({ required: true, description: "The client's id at that reseller." }),
  }),
});

const VerifyLookupInputRef = builder.inputType('VerifyLookupInput', {
  fields: (t) => ({
    lookupId: t.id({ required: true }),
    accessCode: t.string({ required: true, description: 'The 6-digit code mailed to the client.' }),
  }),
});

builder.queryFields((t) => ({
  lookup: t.field({
    type: LookupRef,
    nullable: true,
    description: 'A lookup this reseller started; null for any other id. Never its token.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => runQuery(() => getOwnLookup(ctx, id)).catch(nullWhenNotFound),
  }),
}));

builder.mutationFields((t) => ({
  startLookup: t.field({
    type: LookupRef,
    description:
      "Starts a lookup of another reseller's client (or one's own): a 6-digit code is mailed to the client, valid 15 " +
      'minutes. Each call mails a new code; at most 5 lookups a client an hour (else `rate_limited`).',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: StartLookupInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'StartLookupResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => startLookup(c, { issuer_id: input.issuerId, client_id: input.clientId })),
  }),
  verifyLookup: t.field({
    type: LookupVerificationRef,
    description:
      'Verifies a lookup with the code the client received and answers its token once. A wrong code is InputError ' +
      '`invalid_lookup_code` and uses one of 5 attempts. Takes no Idempotency-Key: the token is never stored.',
    authScopes: { reseller: true },
    extensions: showsSecretOnce,
    args: { input: t.arg({ type: VerifyLookupInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'VerifyLookupResult' } },
    resolve: async (_, { input }, ctx) => {
      const outcome = await runMutation(ctx, (c) => verifyLookup(c, input.lookupId, { access_code: input.accessCode }));
      // The wrong code's attempt is kept: the use case returned it, and it is answered here, outside the savepoint.
      if ('wrongCode' in outcome) throw toGraphQLError(outcome.wrongCode);
      return outcome;
    },
  }),
}));

// The reseller's lookup setting, as REST's lookup-settings.rest.ts.

const LookupSettingsRef = builder.objectRef<Reseller>('LookupSettings').implement({
  description: "The reseller's lookup setting.",
  fields: (t) => ({
    lookupEnabled: t.boolean({
      description: "true: other resellers may look up this reseller's clients (it is listed in `issuers`).",
      resolve: (r) => r.lookupEnabled,
    }),
  }),
});

builder.queryFields((t) => ({
  lookupSettings: t.field({
    type: LookupSettingsRef,
    description: "Whether other resellers may look up this reseller's clients.",
    authScopes: { reseller: true },
    resolve: (_, __, ctx) => runQuery(() => getOwnReseller(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  setLookupEnabled: t.field({
    type: LookupSettingsRef,
    description:
      "Lets other resellers look up this reseller's clients (`enabled: true`), or stops it: off revokes every lookup " +
      'of its clients for good (REVOKED; on again revives none). Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { enabled: t.arg.boolean({ required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'SetLookupEnabledResult' } },
    resolve: (_, { enabled }, ctx) => runMutation(ctx, (c) => setLookupEnabled(c, { enabled })),
  }),
}));
