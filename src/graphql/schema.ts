import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
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

let schema: GraphQLSchema | undefined;

export function graphqlSchema(): GraphQLSchema {
  return (schema ??= builder.toSchema({ sortSchema: true }));
}

/** The text committed as schema.graphql; a test fails when it drifts from the code. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(graphqlSchema()))}\n`;
}
