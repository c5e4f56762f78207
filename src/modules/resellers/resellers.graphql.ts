import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { runMutation, runQuery } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { listIssuers, type Reseller } from './resellers.service.ts';
import { getCorsOrigins, MAX_CORS_ORIGINS, setCorsOrigins } from './cors-origins.ts';

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

// The reseller's CORS allow-list for /graphql (docs/partner-guide.md "Calling from a browser"), as REST's
// cors-origins.rest.ts. Neither field takes a client-session token: a frontend never manages it.

const CorsOriginsRef = builder.objectRef<string[]>('CorsOrigins').implement({
  description: "The reseller's CORS allow-list: the origins whose pages may call /graphql with its client-session tokens.",
  fields: (t) => ({
    origins: t.stringList({
      description: 'Exact origins (`scheme://host[:port]`, lower-cased), in alphabetical order.',
      resolve: (origins) => origins,
    }),
  }),
});

const SetCorsOriginsInputRef = builder.inputType('SetCorsOriginsInput', {
  description: 'The whole allow-list, replacing the one stored.',
  fields: (t) => ({
    origins: t.stringList({
      required: true,
      description:
        `Up to ${MAX_CORS_ORIGINS} exact origins such as \`https://app.example\`: https, or http for localhost and ` +
        '127.0.0.1 (development); no path, query or wildcard. An empty list allows no origin.',
    }),
  }),
});

builder.queryFields((t) => ({
  corsOrigins: t.field({
    type: CorsOriginsRef,
    description: "The origins whose pages may call /graphql with this reseller's client-session tokens.",
    authScopes: { reseller: true },
    resolve: (_, __, ctx) => runQuery(() => getCorsOrigins(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  setCorsOrigins: t.field({
    type: CorsOriginsRef,
    description:
      'Replaces the CORS allow-list for /graphql; every server process answers by the new list within 1 s. ' + 'Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: SetCorsOriginsInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'SetCorsOriginsResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => setCorsOrigins(c, { origins: input.origins })),
  }),
}));
