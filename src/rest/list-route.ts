import type { z } from 'zod';
import type { ErrorCode } from '../platform/errors.ts';
import { pageArgsFromQuery, pageQuerySchema, type Page, type PageArgs } from '../platform/pagination.ts';
import type { Ctx } from '../platform/request-context.ts';
import { listEnvelope, listOf } from './envelope.ts';
import type { Route, RouteRequest } from './route.ts';

/** What a list route declares: the rest (the page arguments, `invalid_cursor`, the envelope) is the same for every list. */
interface ListRouteSpec<T> {
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /** The query it takes, `limit`, `starting_after` and `ending_before` included (pageQuerySchema when it has no filters). */
  query?: z.ZodObject;
  /** The schema of one item (from its presenter), and the success description naming it. */
  item: z.ZodType;
  description: string;
  /** Its own error codes; `invalid_cursor` is every list's. */
  errors: ErrorCode[];
  takesLookupToken?: boolean;
  /** The list's path as the envelope's `url` names it, from the request's path parameters. */
  url: (params: Record<string, string>) => string;
  message: string;
  /** The use case: one page of rows for these page arguments. */
  list: (ctx: Ctx, page: PageArgs, req: RouteRequest) => Promise<Page<T>>;
  present: (row: T) => unknown;
}

/**
 * A paginated GET answering the V3 list envelope (spec 2.1; docs/partner-guide.md "Operations"):
 * `limit`, `starting_after` and `ending_before` in the query, `has_more` in the answer.
 */
export function listRoute<T>(spec: ListRouteSpec<T>): Route {
  const { url, message, list, present, item, description, query = pageQuerySchema, errors, ...declaration } = spec;
  return {
    ...declaration,
    method: 'GET',
    query,
    success: { status: 200, description, schema: listOf(item) },
    errors: errors.includes('invalid_cursor') ? errors : [...errors, 'invalid_cursor'],
    async handler(ctx, req) {
      const page = await list(ctx, pageArgsFromQuery(req.query), req);
      return { status: 200, body: listEnvelope(page, url(req.params), message, present) };
    },
  };
}
