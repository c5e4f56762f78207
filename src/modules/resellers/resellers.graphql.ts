import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { runMutation, runQuery } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { getOwnReseller, listIssuers, type Reseller } from './resellers.service.ts';
import { setLookupEnabled } from '../lookups/index.ts';

// A reseller's lookup setting and the issuers (docs/partner-guide.md "Lookup"), as REST's resellers.rest.ts.

export const IssuerRef = builder.objectRef<Reseller>('Issuer').implement({
  description: 'A reseller whose clients can be looked up (it has lookup enabled): `issuerId` of startLookup.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
  }),
});

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
  issuers: t.connection({
    type: IssuerRef,
    description: 'Resellers whose clients can be looked up (lookup enabled; this reseller too when it is one), newest first.',
    authScopes: { reseller: true },
    complexity: (args) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 }),
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        return toConnection(await listIssuers(ctx, page), page);
      }),
  }),
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
