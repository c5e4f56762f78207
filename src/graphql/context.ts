import type { Plugin } from 'graphql-yoga';
import type { LiveEvents } from '../modules/events/index.ts';
import type { Ctx } from '../platform/request-context.ts';

/** What a subscription reads besides the use-case context: the process's live events and the request's `Last-Event-ID`. */
export interface LiveContext {
  live?: LiveEvents;
  lastEventId?: string;
}

/**
 * The GraphQL context: the use-case context of this request (one per request, so node caches never
 * leak; a subscription's events each get one of their own: src/graphql/subscriptions.ts).
 */
export type GraphQLContext = Ctx & LiveContext;

/** What src/graphql/http.ts hands yoga for one request: the GraphiQL page has no `ctx`, only its request id. */
export interface ServerContext extends LiveContext {
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
