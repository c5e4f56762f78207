import { builder } from '../../graphql/builder.ts';
import { runQuery } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { listIssuers, type Reseller } from './resellers.service.ts';

// The issuers (docs/partner-guide.md "Lookup"), as REST's resellers.rest.ts; the reseller's lookup setting is
// the lookups module's (lookups.graphql.ts).

export const IssuerRef = builder.objectRef<Reseller>('Issuer').implement({
  description: 'A reseller whose clients can be looked up (it has lookup enabled): `issuerId` of startLookup.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
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
}));
