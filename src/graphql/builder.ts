import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ErrorsPlugin from '@pothos/plugin-errors';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import { idKindOf, idPrefixes, type IdKind } from '../platform/ids.ts';
import type { GraphQLContext } from './context.ts';

// Node ids are the same prefixed ids the REST adapter uses; the prefix names the type.
export const nodeTypeByKind: Partial<Record<IdKind, string>> = {
  pass: 'Pass',
  issuedPass: 'IssuedPass',
  client: 'Client',
};

/**
 * decisions §14. Enforced as a validation rule (complexity.ts), so a rejected query never executes;
 * the plugin's own check would run inside root resolvers and surface as an internal error.
 */
export const queryLimits = { complexity: 5000, depth: 12, breadth: 200 } as const;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: { reseller: boolean };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Date: { Input: string; Output: string };
    ID: { Input: string; Output: string };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, ValidationPlugin, RelayPlugin, ComplexityPlugin, DataloaderPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({ reseller: ctx.caller.kind === 'reseller' }),
  },
  errors: { defaultTypes: [] },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => {
      const kind = idKindOf(globalID);
      return { typename: (kind && nodeTypeByKind[kind]) ?? 'Unknown', id: globalID };
    },
    // The connection field already multiplies by first/last; counting edges as a list again
    // would charge every page ten times over.
    edgesFieldOptions: { complexity: { field: 1, multiplier: 1 } },
    // nodes(ids:) costs what it loads: one selection per id asked for.
    nodesQueryOptions: { complexity: (args) => ({ field: 1, multiplier: args.ids.length }) },
  },
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: 10,
  },
});

builder.queryType({});
builder.mutationType({});

export const prefixOf = (kind: IdKind) => idPrefixes[kind];
