import { isObjectType, lexicographicSortSchema, printSchema, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import './scalars.ts';
import './errors.ts';
// Every module's GraphQL types, registered explicitly.
import '../modules/clients/clients.graphql.ts';
import '../modules/passes/passes.graphql.ts';
import '../modules/providers/providers.graphql.ts';
import '../modules/spa/spa.graphql.ts';
import '../modules/classes/classes.graphql.ts';
import '../modules/bookings/bookings.graphql.ts';
import '../modules/access-codes/access-codes.graphql.ts';
import '../modules/events/events.graphql.ts';
import '../modules/webhooks/webhooks.graphql.ts';
import '../modules/credits/credits.graphql.ts';
import '../modules/resellers/resellers.graphql.ts';
import '../modules/lookups/lookups.graphql.ts';
import '../modules/hosted-sessions/hosted-sessions.graphql.ts';
import '../modules/trusted-documents/trusted-documents.graphql.ts';
import '../modules/client-sessions/client-sessions.graphql.ts';

let schema: GraphQLSchema | undefined;

export function graphqlSchema(): GraphQLSchema {
  return (schema ??= synchronousNodeIds(builder.toSchema({ sortSchema: true })));
}

/**
 * A Node's `id` answers without a promise. Pothos's relay plugin resolves every node id in an
 * async function (its id may come from a loader); ours are columns read with the row, and a
 * promise per id made each node of a list wait a turn of the microtask queue, one more
 * continuation in the compiled execution (src/graphql/compiled-execution.ts). The same value:
 * the type's own `id.resolve`, then the relay options' `encodeGlobalID` (src/graphql/builder.ts).
 * A field some plugin wrapped (its resolver is no longer relay's own) is left as it is.
 */
export function synchronousNodeIds(built: GraphQLSchema): GraphQLSchema {
  const encode = builder.options.relay?.encodeGlobalID;
  for (const type of Object.values(built.getTypeMap())) {
    if (!isObjectType(type) || !type.getInterfaces().some((i) => i.name === 'Node')) continue;
    const field = type.getFields().id;
    const own = type.extensions.pothosOptions?.id?.resolve;
    const relays = field?.extensions.pothosOptions?.resolve;
    if (!field || !own || !relays || !encode || field.resolve !== relays) continue;
    field.resolve = (parent, args, ctx, info) => {
      const id = own(parent, args, ctx, info);
      // Anything but a plain value (a promise, say) takes relay's own way, as before.
      return typeof id === 'string' || typeof id === 'number' ? encode(type.name, String(id), ctx) : relays(parent, args, ctx, info);
    };
  }
  return built;
}

/** The text committed as schema.graphql; a test fails when it drifts from the code. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(graphqlSchema()))}\n`;
}

// Pothos keeps the options a type or field was built with in its extensions; the parts read above.
declare module 'graphql' {
  interface GraphQLObjectTypeExtensions<_TSource, _TContext> {
    pothosOptions?: { id?: { resolve?: GraphQLFieldResolver<_TSource, _TContext> } };
  }
  interface GraphQLFieldExtensions<_TSource, _TContext, _TArgs> {
    pothosOptions?: { resolve?: GraphQLFieldResolver<_TSource, _TContext, _TArgs> };
  }
}
