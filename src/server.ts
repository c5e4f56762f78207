import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { parse, type OperationDefinitionNode } from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from './config.ts';
import type { Clock } from './platform/clock.ts';
import type { Logger } from './platform/logger.ts';
import { authenticateReseller } from './platform/auth.ts';
import { DomainError, errorBody } from './platform/errors.ts';
import { checkIdempotencyKey, fingerprint, runIdempotent, UnstoredResponse } from './platform/idempotency.ts';
import { newRequestId, type Ctx } from './platform/request-context.ts';
import { createHttpMetrics, METRICS_CONTENT_TYPE, type HttpMetrics } from './platform/metrics.ts';
import { createGraphQL } from './graphql/yoga.ts';
import { handleRest, routes, V3_BASE } from './rest/router.ts';
import { header, readBody, sendError, sendJson } from './rest/http.ts';

export interface AppDeps { orm: MikroORM; config: Config; clock: Clock; log: Logger }

/**
 * Builds the HTTP server: the V3 route table, GraphQL (yoga) and health endpoints.
 * It never listens; main.ts and the tests do.
 */
export function buildServer(deps: AppDeps): http.Server {
  const yoga = createGraphQL(deps.config);
  const metrics = createHttpMetrics({
    base: V3_BASE,
    routes: [...routes, { method: 'GET', path: '/openapi.json' }],
    fixedPaths: ['/graphql', '/healthz', '/readyz', '/metrics'],
  });
  return http.createServer((req, res) => {
    const requestId = newRequestId();
    const log = deps.log.child({ request_id: requestId });
    const started = performance.now();
    res.setHeader('Request-Id', requestId);
    res.on('finish', () => {
      const ms = performance.now() - started;
      log.info({ method: req.method, url: req.url, status: res.statusCode, ms: Math.round(ms) }, 'request');
      metrics.observe(req.method, req.url, res.statusCode, ms / 1000);
    });
    route(deps, yoga, req, res, requestId, log, metrics).catch((err: unknown) => {
      log.error({ err }, 'unhandled error');
      if (res.headersSent) return res.destroy();
      sendError(res, new DomainError('internal_error', 'An unexpected error occurred; retry with the same Idempotency-Key'), requestId);
    });
  });
}

async function route(deps: AppDeps, yoga: ReturnType<typeof createGraphQL>, req: IncomingMessage, res: ServerResponse, requestId: string, log: Logger, metrics: HttpMetrics): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (path === V3_BASE || path.startsWith(`${V3_BASE}/`)) {
    return handleRest(deps, req, res, path.slice(V3_BASE.length) || '/', url.searchParams, requestId, log);
  }
  if (path === '/graphql') return handleGraphQL(deps, yoga, req, res, url, requestId, log);
  if (path === '/healthz' && req.method === 'GET') return sendJson(res, 200, { status: 'ok' });
  if (path === '/metrics' && req.method === 'GET') {
    const text = metrics.exposition();
    res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) });
    return void res.end(text);
  }
  if (path === '/readyz' && req.method === 'GET') {
    try {
      await deps.orm.em.fork().execute('select 1');
      return sendJson(res, 200, { status: 'ready' });
    } catch {
      return sendJson(res, 503, { status: 'database unreachable' });
    }
  }
  return sendError(res, new DomainError('resource_not_found', `No such path: ${req.method} ${path}`), requestId);
}

/**
 * GraphQL over HTTP. Authentication happens here (a top-level 401/403), so every resolver runs
 * for a known reseller. A mutation with an Idempotency-Key runs in one transaction with its
 * idempotency record; its resolvers open savepoints inside it.
 */
async function handleGraphQL(deps: AppDeps, yoga: ReturnType<typeof createGraphQL>, req: IncomingMessage, res: ServerResponse, url: URL, requestId: string, log: Logger): Promise<void> {
  // A browser (Accept: text/html) gets GraphiQL, also with ?query= prefilled; API clients ask for JSON.
  const wantsPage = req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
  const em = deps.orm.em.fork();
  try {
    const raw = req.method === 'POST' ? await readBody(req, deps.config.BODY_LIMIT_BYTES) : Buffer.alloc(0);
    const base: Omit<Ctx, 'caller'> = { em, clock: deps.clock, config: deps.config, log, requestId };
    if (wantsPage) return await forward(yoga, req, res, url, raw, { ...base, caller: { kind: 'anonymous' } });
    const caller = await authenticateReseller(em, header(req, 'authorization'));
    const ctx: Ctx = { ...base, caller };
    // Only a POSTed mutation takes the key (decisions §6: ignored on GET and on queries), so only then is it validated.
    const rawKey = header(req, 'idempotency-key');
    const op = rawKey !== undefined && req.method === 'POST' ? mutationOf(raw) : undefined;
    const key = op ? checkIdempotencyKey(rawKey) : undefined;
    if (key === undefined || !op) return await forward(yoga, req, res, url, raw, ctx);

    const result = await runIdempotent(
      { em, clock: deps.clock, config: deps.config },
      { resellerId: caller.resellerId, key, fingerprint: fingerprint('graphql', op.query, op.variables ?? {}, op.operationName ?? null) },
      async (tx) => {
        const response = await yoga.fetch(toRequest(req, url, raw), { ctx: { ...ctx, em: tx, idempotencyKey: key } });
        const stored = { status: response.status, body: await response.json() };
        // Top-level errors (unexpected failures) are not stored: roll back so a retry re-executes.
        if (stored.status >= 500 || (stored.body as { errors?: unknown[] }).errors?.length) throw new UnstoredResponse(stored);
        return stored;
      },
      (err) => ({ status: err.status, body: { errors: [{ message: err.message, extensions: { code: err.code, type: err.type } }] } }),
    );
    return sendJson(res, result.status, result.body, {
      'Content-Type': 'application/graphql-response+json; charset=utf-8',
      ...(result.replayed ? { 'X-Idempotent-Replayed': 'true' } : {}),
    });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // GraphQL-over-HTTP shape for errors raised before execution (auth, body, idempotency).
    const { error } = errorBody(err, requestId);
    return sendJson(res, err.status, { errors: [{ message: error.message, extensions: { ...error } }] }, {
      'Content-Type': 'application/graphql-response+json; charset=utf-8',
      ...(err.headers ?? {}),
    });
  }
}

interface GraphQLParams { query: string; variables?: Record<string, unknown>; operationName?: string }

/** The request's operation when it is a mutation (queries need no idempotency record). */
function mutationOf(raw: Buffer): GraphQLParams | undefined {
  let params: GraphQLParams;
  try {
    params = JSON.parse(raw.toString('utf8')) as GraphQLParams;
    if (typeof params?.query !== 'string') return undefined;
    const ops = parse(params.query).definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    const op = params.operationName ? ops.find((o) => o.name?.value === params.operationName) : ops.length === 1 ? ops[0] : undefined;
    return op?.operation === 'mutation' ? params : undefined;
  } catch {
    return undefined; // yoga answers malformed requests itself
  }
}

function toRequest(req: IncomingMessage, url: URL, raw: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url.href, { method: req.method, headers, body: hasBody ? new Uint8Array(raw) : undefined });
}

async function forward(yoga: ReturnType<typeof createGraphQL>, req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer, ctx: Ctx): Promise<void> {
  const response = await yoga.fetch(toRequest(req, url, raw), { ctx });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => { headers[name] = value; });
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}
