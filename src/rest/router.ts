import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress } from '../platform/client-address.ts';
import { DomainError, errorBody, validationError } from '../platform/errors.ts';
import { fingerprint } from '../platform/idempotency.ts';
import type { Logger } from '../platform/logger.ts';
import type { Pipeline } from '../platform/pipeline.ts';
import { labelRoute } from '../platform/metrics.ts';
import { parseQueryString, textProblem } from '../platform/text.ts';
import { passesRoutes } from '../modules/passes/passes.rest.ts';
import { clientsRoutes } from '../modules/passes/clients.rest.ts';
import { providersRoutes } from '../modules/providers/providers.rest.ts';
import { spaRoutes } from '../modules/spa/spa.rest.ts';
import { classesRoutes } from '../modules/classes/classes.rest.ts';
import { bookingsRoutes } from '../modules/bookings/bookings.rest.ts';
import { providerBookingsRoutes } from '../modules/bookings/provider-bookings.rest.ts';
import { resellersRoutes } from '../modules/resellers/resellers.rest.ts';
import { corsOriginsRoutes } from '../modules/resellers/cors-origins.rest.ts';
import { lookupsRoutes } from '../modules/lookups/lookups.rest.ts';
import { lookupSettingsRoutes } from '../modules/lookups/lookup-settings.rest.ts';
import { hostedSessionsRoutes } from '../modules/hosted-sessions/hosted-sessions.rest.ts';
import { clientSessionsRoutes } from '../modules/client-sessions/client-sessions.rest.ts';
import { accessCodesRoutes } from '../modules/access-codes/access-codes.rest.ts';
import { providerAccessCodesRoutes } from '../modules/access-codes/provider-access-codes.rest.ts';
import { webhooksRoutes } from '../modules/webhooks/webhooks.rest.ts';
import { eventsRoutes } from '../modules/events/events.rest.ts';
import { creditsRoutes } from '../modules/credits/credits.rest.ts';
import { trustedDocumentsRoutes } from '../modules/trusted-documents/trusted-documents.rest.ts';
import { header, parseJsonBody, readBody, sendJson } from './http.ts';
import type { Route, RouteResponse, RouteTable } from './route.ts';

export const V3_BASE = '/v3/api/business/reseller';
export const PROVIDER_BASE = '/v3/api/provider';

// The route tables: every module's V3 operations, listed explicitly. `routes` is the reseller API.
export const routes: Route[] = [
  ...passesRoutes,
  ...clientsRoutes,
  ...providersRoutes,
  ...spaRoutes,
  ...classesRoutes,
  ...bookingsRoutes,
  ...accessCodesRoutes,
  ...webhooksRoutes,
  ...eventsRoutes,
  ...creditsRoutes,
  ...lookupSettingsRoutes,
  ...resellersRoutes,
  ...corsOriginsRoutes,
  ...lookupsRoutes,
  ...hostedSessionsRoutes,
  ...trustedDocumentsRoutes,
  ...clientSessionsRoutes,
];

/** The provider side (docs/partner-guide.md "Provider side", "Access codes"): a provider's own bookings and access-code redemption, with a provider key. */
export const providerRoutes: Route[] = [...providerBookingsRoutes, ...providerAccessCodesRoutes];

export const resellerApi: RouteTable = { base: V3_BASE, caller: 'reseller', routes };
export const providerApi: RouteTable = { base: PROVIDER_BASE, caller: 'provider', routes: providerRoutes };

/** Handles a request under the table's base; `path` is the part after it. */
export type RestHandler = (
  pipeline: Pipeline,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  search: string,
  requestId: string,
  log: Logger,
) => Promise<void>;

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

function compile(routes: Route[]): CompiledRoute[] {
  return routes.map((route) => {
    const names: string[] = [];
    const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { route, pattern: new RegExp(`^${source}$`), names };
  });
}

/**
 * Mounts a route table under its base: one router for every table, each request through the one
 * pipeline: authenticate (a key of the table's caller kind; a Service-Lookup-Token only on a route
 * that `takesLookupToken`) → read and check input (text rule,
 * declared query, body) → idempotency → transaction (every POST/PUT/DELETE) → the route's handler →
 * the V3 JSON it presents. `GET <base>/openapi.json` answers `document`, without a key.
 */
export function mountRoutes(table: RouteTable, document: () => object): RestHandler {
  const compiled = compile(table.routes);
  return async (pipeline, req, res, path, search, requestId, log) => {
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/openapi.json') {
      labelRoute(req, `${table.base}/openapi.json`);
      return sendJson(res, 200, document(), { 'Request-Id': requestId });
    }
    const reply = (r: RouteResponse, headers: Record<string, string> = {}) =>
      sendJson(res, r.status, r.body, { 'Request-Id': requestId, ...headers });
    try {
      const match = findRoute(compiled, table.base, method, path);
      labelRoute(req, table.base + match.route.path);
      const raw = await readBody(req, pipeline.bodyLimit);
      const caller = await pipeline.authenticate(
        { authorization: header(req, 'authorization'), lookupToken: header(req, 'service-lookup-token') },
        table.caller,
        {
          takesLookupToken: match.route.takesLookupToken === true,
          address: clientAddress(req, pipeline.trustProxy),
          limit: match.route.limit,
        },
      );
      const { route, params } = match;
      // No id contains NUL (PostgreSQL text cannot hold it): such a path names nothing.
      if (Object.values(params).some((v) => textProblem(v) !== undefined)) {
        throw new DomainError('resource_not_found', `No such resource: ${path}`);
      }
      const query = parseQueryString(search);
      rejectRepeatedQuery(query, route.repeatableQuery ?? []);
      const queryObject = Object.fromEntries(query.entries());
      rejectUnknownQuery(queryObject, route.query ? Object.keys(route.query.shape) : []);
      const body = method === 'GET' || method === 'DELETE' ? {} : parseJsonBody(req, raw);
      if (!route.body && Object.keys(body as object).length > 0) throw validationError('body', 'This operation takes no body');
      const ctx = pipeline.context(caller, {
        requestId,
        log,
        idempotencyKey: route.idempotent ? header(req, 'idempotency-key') : undefined,
        host: header(req, 'host'),
      });
      const request = { params, query: queryObject, search: query, body };

      if (route.method === 'GET') return reply(await route.handler(ctx, request));
      const handler = route.handler;
      // A use case's error may carry headers (429's Retry-After); a stored response keeps status and body only.
      let errorHeaders: Record<string, string> = {};
      const result = await pipeline.write(
        ctx,
        () => fingerprint(method, route.path, params, body),
        (tx) => handler(tx, request),
        (err) => {
          errorHeaders = err.headers ?? {};
          return { status: err.status, body: errorBody(err, requestId) };
        },
      );
      return reply(result, result.replayed ? { 'X-Idempotent-Replayed': 'true' } : result.status >= 400 ? errorHeaders : {});
    } catch (err) {
      if (err instanceof DomainError) {
        return reply({ status: err.status, body: errorBody(err, requestId) }, err.headers ?? {});
      }
      throw err;
    }
  };
}

/** The route for method and path; a known path with another method is 405 with `Allow`. */
function findRoute(
  compiled: CompiledRoute[],
  base: string,
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } {
  const allowed: string[] = [];
  for (const c of compiled) {
    const m = c.pattern.exec(path);
    if (!m) continue;
    if (c.route.method !== method) {
      allowed.push(c.route.method);
      continue;
    }
    const params: Record<string, string> = {};
    c.names.forEach((name, i) => {
      params[name] = safeDecode(m[i + 1]);
    });
    return { route: c.route, params };
  }
  if (allowed.length > 0) {
    // Two patterns can match one path (`/issued_passes/update` and `/issued_passes/{client_id}`): list each method once.
    const allow = [...new Set(allowed)].join(', ');
    throw new DomainError('method_not_allowed', `${method} is not allowed on ${base}${path}; allowed: ${allow}`, {
      headers: { Allow: allow },
    });
  }
  throw new DomainError('resource_not_found', `No such operation: ${method} ${base}${path}`);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `?limit=5&limit=500` is ambiguous: a parameter sent twice is a 400 unless the operation takes a list. */
function rejectRepeatedQuery(query: URLSearchParams, repeatable: string[]): void {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (seen.has(name) && !repeatable.includes(name)) throw validationError(name, `Send '${name}' once`);
    seen.add(name);
  }
}

/** Query parameters an operation does not take are a 400, so a typo never passes silently. */
function rejectUnknownQuery(query: Record<string, string | undefined>, allowed: string[]): void {
  const unknown = Object.keys(query).find((k) => !allowed.includes(k));
  if (unknown !== undefined) throw validationError(unknown, `Unknown query parameter '${unknown}'`);
}
