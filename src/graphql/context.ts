import type { Plugin } from 'graphql-yoga';
import type { Ctx } from '../platform/request-context.ts';

/** The GraphQL context: the use-case context of this request (one per request, so node caches never leak). */
export type GraphQLContext = Ctx;

/** What src/graphql/http.ts hands yoga for one request: the GraphiQL page has no `ctx`, only its request id. */
export interface ServerContext {
  ctx?: Ctx;
  rawIdempotencyKey?: string;
  requestId?: string;
}

/**
 * Plugins of the gateway's yoga server (src/graphql/yoga.ts). Yoga builds the GraphQL context after
 * validation: hooks up to there see the server context (`RequestPlugin`), execution hooks that
 * context with the request's use-case context merged in (`ExecutionPlugin`).
 */
export type RequestPlugin = Plugin<ServerContext, ServerContext>;
export type ExecutionPlugin = Plugin<ServerContext & GraphQLContext, ServerContext, GraphQLContext>;
