import type { z } from 'zod';
import type { KeyKind } from '../platform/auth.ts';
import type { ErrorCode } from '../platform/errors.ts';
import type { Ctx } from '../platform/request-context.ts';
import type { TxCtx } from '../db/engine/index.ts';

export interface RouteRequest {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  /** The raw query string: `query` keeps only the last value of a repeated parameter. */
  search: URLSearchParams;
  body: unknown;
}

export interface RouteResponse {
  status: number;
  body: unknown;
}

/**
 * One V3 operation: the table entry the router dispatches on and the OpenAPI document is
 * generated from (the same zod schemas the services parse with, so neither can drift).
 * The router enforces what a route declares: its query parameters, whether it takes a body,
 * Idempotency-Key, and the transaction (every POST/PUT/DELETE handler runs in one and gets a TxCtx).
 */
export type Route = RouteDeclaration &
  (
    | { method: 'GET'; handler: (ctx: Ctx, req: RouteRequest) => Promise<RouteResponse> }
    | { method: 'POST' | 'PUT' | 'DELETE'; handler: (tx: TxCtx, req: RouteRequest) => Promise<RouteResponse> }
  );

interface RouteDeclaration {
  /** Under its table's base (RouteTable), with {name} path parameters. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** The query parameters it takes; any other is a 400 naming it. */
  query?: z.ZodObject;
  /** Query parameters that may be sent more than once (read from `search`); any other repeated one is a 400. */
  repeatableQuery?: string[];
  /** The JSON body it takes (parsed by the service); a route without one refuses a body. */
  body?: z.ZodType;
  /** Accepts Idempotency-Key (spec part 8 rule 1). */
  idempotent?: boolean;
  /**
   * Takes a Service-Lookup-Token (docs/partner-guide.md "Lookup"): the looked-up client's bookings, access codes and
   * reads, with or without a bearer key. On any route without it, a token is 403 before anything runs.
   */
  takesLookupToken?: boolean;
  /** A rate limit of its own besides the key's (docs/operator-guide.md "Rate limits"): `redeem`, per provider key. */
  limit?: 'redeem';
  /** The success response; `schema` (from the presenters) is what the OpenAPI document publishes for it. */
  success: { status: number; description: string; schema: z.ZodType; example?: string };
  errors: ErrorCode[];
}

export const defineRoutes = (routes: Route[]): Route[] => routes;

/**
 * A route table mounted under a base path for one kind of caller: every route of it takes only
 * that kind's API key (the reseller API `sk_…`, the provider API `pk_…`; docs/partner-guide.md "Provider side").
 */
export interface RouteTable {
  base: string;
  caller: KeyKind;
  routes: Route[];
}
