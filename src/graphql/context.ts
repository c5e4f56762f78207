import type { Ctx } from '../platform/request-context.ts';

/** The GraphQL context: the use-case context of this request (one per request, so node caches never leak). */
export type GraphQLContext = Ctx;
