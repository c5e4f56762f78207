import type { z } from 'zod';
import type { ErrorCode } from '../platform/errors.ts';
import type { Ctx } from '../platform/request-context.ts';

export interface RouteRequest {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  /** The raw query string: `query` keeps only the last value of a repeated parameter. */
  search: URLSearchParams;
  body: unknown;
}

export interface RouteResponse { status: number; body: unknown }

/**
 * One V3 operation: the table entry the router dispatches on and the OpenAPI document is
 * generated from (the same zod schemas the services parse with, so neither can drift).
 */
export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** Under /v3/api/business/reseller, with {name} path parameters. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  query?: z.ZodObject;
  /** Query parameters that may be sent more than once (read from `search`); any other repeated one is a 400. */
  repeatableQuery?: string[];
  body?: z.ZodType;
  paginated?: boolean;
  /** Accepts Idempotency-Key (spec part 8 rule 1). */
  idempotent?: boolean;
  /** Runs in one database transaction. */
  mutation?: boolean;
  /** The success response; `schema` (from the presenters) is what the OpenAPI document publishes for it. */
  success: { status: number; description: string; schema: z.ZodType; example?: string };
  errors: ErrorCode[];
  handler: (ctx: Ctx, req: RouteRequest) => Promise<RouteResponse>;
}

export const defineRoutes = (routes: Route[]): Route[] => routes;
