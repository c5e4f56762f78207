import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Clock } from '../platform/clock.ts';
import { authenticateReseller } from '../platform/auth.ts';
import { DomainError, errorBody, validationError } from '../platform/errors.ts';
import { checkIdempotencyKey, fingerprint, runIdempotent } from '../platform/idempotency.ts';
import type { Logger } from '../platform/logger.ts';
import type { Ctx } from '../platform/request-context.ts';
import { passesRoutes } from '../modules/passes/passes.rest.ts';
import { clientsRoutes } from '../modules/clients/clients.rest.ts';
import { providersRoutes } from '../modules/providers/providers.rest.ts';
import { spaRoutes } from '../modules/spa/spa.rest.ts';
import { classesRoutes } from '../modules/classes/classes.rest.ts';
import { openApiDocument } from './openapi.ts';
import { header, parseJsonBody, readBody, sendJson } from './http.ts';
import type { Route, RouteResponse } from './route.ts';

export const V3_BASE = '/v3/api/business/reseller';

// The route table: every module's V3 operations, listed explicitly.
export const routes: Route[] = [
  ...passesRoutes,
  ...clientsRoutes,
  ...providersRoutes,
  ...spaRoutes,
  ...classesRoutes,
];

interface CompiledRoute { route: Route; pattern: RegExp; names: string[] }

const compiled: CompiledRoute[] = routes.map((route) => {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), names };
});

export interface RestDeps { orm: MikroORM; config: Config; clock: Clock; log: Logger }

/** Handles a request under V3_BASE; `path` is the part after it. */
export async function handleRest(deps: RestDeps, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, requestId: string, log: Logger): Promise<void> {
  const method = req.method ?? 'GET';
  if (method === 'GET' && path === '/openapi.json') {
    return sendJson(res, 200, openApiDocument(routes), { 'Request-Id': requestId });
  }
  const match = findRoute(method, path);
  const em = deps.orm.em.fork();
  const reply = (r: RouteResponse, headers: Record<string, string> = {}) =>
    sendJson(res, r.status, r.body, { 'Request-Id': requestId, ...headers });
  try {
    if (!match) {
      throw new DomainError('resource_not_found', `No such operation: ${method} ${V3_BASE}${path}`);
    }
    const { route, params } = match;
    const raw = await readBody(req, deps.config.BODY_LIMIT_BYTES);
    const caller = await authenticateReseller(em, header(req, 'authorization'));
    // No id contains NUL (PostgreSQL text cannot hold it): such a path names nothing.
    if (Object.values(params).some((v) => v.includes('\u0000'))) {
      throw new DomainError('resource_not_found', `No such resource: ${path}`);
    }
    const body = method === 'GET' || method === 'DELETE' ? {} : parseJsonBody(req, raw);
    rejectRepeatedQuery(query, route.repeatableQuery ?? []);
    const queryObject = Object.fromEntries(query.entries());
    if (!route.paginated && !route.query) rejectUnknownQuery(queryObject, []);
    const key = route.idempotent ? checkIdempotencyKey(header(req, 'idempotency-key')) : undefined;
    const ctx: Ctx = { em, caller, clock: deps.clock, config: deps.config, log, requestId, idempotencyKey: key };
    const request = { params, query: queryObject, search: query, body };

    if (key !== undefined) {
      const result = await runIdempotent(
        { em, clock: deps.clock, config: deps.config },
        { resellerId: caller.resellerId, key, fingerprint: fingerprint(method, route.path, params, body) },
        (tx) => route.handler({ ...ctx, em: tx }, request),
        (err) => ({ status: err.status, body: errorBody(err, requestId) }),
      );
      return reply(result, result.replayed ? { 'X-Idempotent-Replayed': 'true' } : {});
    }
    const result = route.mutation
      ? await em.transactional((tx) => route.handler({ ...ctx, em: tx }, request))
      : await route.handler(ctx, request);
    return reply(result);
  } catch (err) {
    if (err instanceof DomainError) {
      return reply({ status: err.status, body: errorBody(err, requestId) }, err.headers ?? {});
    }
    throw err;
  }
}

function findRoute(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
  for (const c of compiled) {
    if (c.route.method !== method) continue;
    const m = c.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    c.names.forEach((name, i) => { params[name] = safeDecode(m[i + 1]); });
    return { route: c.route, params };
  }
  return undefined;
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
export function rejectUnknownQuery(query: Record<string, string | undefined>, allowed: string[]): void {
  const unknown = Object.keys(query).find((k) => !allowed.includes(k));
  if (unknown !== undefined) throw validationError(unknown, `Unknown query parameter '${unknown}'`);
}
