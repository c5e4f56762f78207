export {
  createClient,
  GatewayError,
  type Client,
  type ClientOptions,
  type Document,
  type GraphQLErrorEntry,
  type RequestOptions,
  type SubscribeOptions,
  type SubscriptionEvent,
} from './client.ts';
export * from './operations.ts';
export type * from './gql/graphql.ts';
export type { ResultOf, VariablesOf } from '@graphql-typed-document-node/core';
