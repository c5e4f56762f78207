import SchemaBuilder, { brandWithType } from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ErrorsPlugin from '@pothos/plugin-errors';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import { idKindOf, idPrefixes, type IdKind } from '../platform/ids.ts';
import type { GraphQLContext } from './context.ts';
import { clientSessionOf } from '../platform/request-context.ts';

// Node ids are the same prefixed ids the REST adapter uses; the prefix names the type.
// Each module registers its node types with the loader that enforces the caller's tenancy.
const nodeTypeByKind: Partial<Record<IdKind, string>> = {};
const nodeLoaders = new Map<string, (ctx: GraphQLContext, id: string) => Promise<unknown>>();
/** The node types a client-session token may read by node/nodes: its own client's rows and the catalogue (docs/partner-guide.md "Client sessions"). */
const clientSessionNodeTypes = new Set<string>();

export function registerNodeType(
  kind: IdKind,
  typename: string,
  load: (ctx: GraphQLContext, id: string) => Promise<unknown>,
  { clientSession }: { clientSession: boolean },
): void {
  nodeTypeByKind[kind] = typename;
  nodeLoaders.set(typename, load);
  if (clientSession) clientSessionNodeTypes.add(typename);
}

async function loadNode(ctx: GraphQLContext, { typename, id }: { typename: string; id: string }): Promise<unknown> {
  const load = nodeLoaders.get(typename);
  if (!load) return null;
  // A client-session token reads only the types marked for it (a webhook endpoint or an event is
  // null to it, as an unknown id); the type's loader then holds it to its own client's rows.
  if (clientSessionOf(ctx) && !clientSessionNodeTypes.has(typename)) return null;
  const node = await load(ctx, id).then(visible, notFoundAsNull);
  // Branded so the Node interface resolves its concrete type; the name is a registered object type.
  if (node) brandWithType(node, typename as Parameters<typeof brandWithType>[1]);
  return node;
}

/**
 * docs/errors.md (Limits). Enforced before execution (queryCostLimits in limits.ts), so a rejected query never executes;
 * the plugin's own check would run inside root resolvers and surface as an internal error.
 * The cost limit admits what a partner's "near me" screen needs in one request — 100 providers ×
 * 5 classes × 3 next instances costs about 11,400 — and refuses a few times more than that.
 */
export const queryLimits = { complexity: 25_000, depth: 12, breadth: 200 } as const;

const UNKNOWN = 'Unknown';
const visible = (node: unknown) => (node instanceof Error || node == null ? null : node);
function notFoundAsNull(err: unknown): null {
  if ((err as { code?: string }).code === 'resource_not_found') return null;
  throw err;
}

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
  plugins: [ScopeAuthPlugin, ErrorsPlugin, RelayPlugin, ComplexityPlugin, DataloaderPlugin],
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
      return { typename: (kind && nodeTypeByKind[kind]) ?? UNKNOWN, id: globalID };
    },
    // The connection field already multiplies by first/last; counting edges as a list again
    // would charge every page ten times over.
    edgesFieldOptions: { complexity: { field: 1, multiplier: 1 } },
    // node/nodes answer null for an id this caller cannot see, or that names no node type,
    // like client(id:) does: no error, nothing to tell foreign from missing.
    // Both open to a client-session token (the `clientSession` scope mark of src/graphql/use-case.ts's
    // forClientSession, written out: that file builds on this one), for a Relay frontend's refetch.
    nodeQueryOptions: { extensions: { clientSession: 'read' }, resolve: (_root, { id }, ctx) => loadNode(ctx, id) },
    // nodes(ids:) costs what it loads: one selection per id asked for. The loaders batch per type.
    nodesQueryOptions: {
      extensions: { clientSession: 'read' },
      complexity: (args) => ({ field: 1, multiplier: args.ids.length }),
      resolve: (_root, { ids }, ctx) => ids.map((id) => loadNode(ctx, id)),
    },
  },
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: 10,
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({
  description:
    'Live events over Server-Sent Events (`Accept: text/event-stream`; docs/partner-guide.md "Live booking status"). ' +
    'Each message carries `id:`, the event id: send it back as `Last-Event-ID` (or `after`) to resume without a gap.',
});

export const prefixOf = (kind: IdKind) => idPrefixes[kind];
