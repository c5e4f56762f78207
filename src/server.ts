import cluster from 'node:cluster';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedRead } from './db/engine/index.ts';
import type { Config } from './config.ts';
import type { Clock } from './platform/clock.ts';
import type { Logger } from './platform/logger.ts';
import { DomainError, errorBody, validationError } from './platform/errors.ts';
import { createPipeline, type Pipeline } from './platform/pipeline.ts';
import { newRequestId } from './platform/request-context.ts';
import { RETRY_AFTER_SECONDS } from './platform/unavailable.ts';
import { createRateLimits } from './platform/rate-limits.ts';
import { clientAddress } from './platform/client-address.ts';
import { Draining } from './platform/shutdown.ts';
import { createMetrics, labelRoute, METRICS_CONTENT_TYPE, type Metrics } from './platform/metrics.ts';
import { answerPrimary, scrapeThroughPrimary } from './platform/cluster-metrics.ts';
import { createGraphQL, type GraphQLServer } from './graphql/yoga.ts';
import { handleGraphQL } from './graphql/http.ts';
import { createCorsPolicy, type CorsPolicy } from './graphql/cors.ts';
import { mountRoutes, providerApi, resellerApi, routes, type RestHandler } from './rest/router.ts';
import { openApiDocument } from './rest/openapi.ts';
import { header, readBody, sendError, sendJson } from './rest/http.ts';
import { masterKey } from './platform/secrets.ts';
import { decodeUtf8, parseQueryString } from './platform/text.ts';
import { hostedErrorPage, hostedPage, type PageResponse } from './modules/hosted-sessions/hosted-sessions.page.ts';
import { LiveEvents } from './modules/events/index.ts';
import { isExamplePath, serveExample } from './examples/examples.ts';
import { CatalogueCache } from './platform/catalogue-cache.ts';

export interface AppDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  log: Logger;
  /** Set by `serve`, which begins it on SIGTERM (src/platform/shutdown.ts); tests leave it out. */
  draining?: Draining;
}

/**
 * What a server reads once before it listens, so no request pays for it: the master key of
 * secrets at rest (docs/operator-guide.md "Secrets at rest"). Awaited, so that closing the ORM right after start
 * never meets the read still in flight; a failure here is only logged and the read is tried again
 * on first use.
 */
export async function warmUp(deps: Pick<AppDeps, 'orm' | 'config' | 'log'>): Promise<void> {
  await masterKey(deps.orm.em, deps.config).catch((err: unknown) =>
    deps.log.warn({ err }, 'secrets master key not read at start; reading it on first use'),
  );
}

/**
 * Builds the HTTP server: the V3 route tables (the reseller API and the provider API, each under
 * its base) and GraphQL, all through one request pipeline
 * (src/platform/pipeline.ts), and the health endpoints. It never listens; main.ts and the tests do.
 */
export function buildServer(deps: AppDeps): http.Server {
  // Subscriptions' events (docs/partner-guide.md "Live booking status"): one reader and one LISTEN connection for the process, made on the first subscriber.
  const live = new LiveEvents(deps.orm, deps.log, {
    maxOpen: deps.config.SUBSCRIPTIONS_MAX,
    url: deps.orm.config.get('clientUrl')!,
  });
  // Providers kept between requests until a change is notified (src/platform/catalogue-cache.ts): one LISTEN connection for the process.
  const catalogue = new CatalogueCache({
    url: deps.orm.config.get('clientUrl')!,
    log: deps.log,
    heard: (table) => metrics.catalogueChangeHeard(table),
  });
  const metrics = createMetrics({
    pool: () => deps.orm.driver.getConnection().getNativeClient(),
    subscriptions: () => ({ open: live.open, max: deps.config.SUBSCRIPTIONS_MAX }),
    catalogueListening: () => catalogue.listening,
  });
  void catalogue.start();
  // An HTTP worker of `serve --workers N`: the primary sums this server's metrics into every scrape.
  if (cluster.isWorker) answerPrimary(metrics);
  const limits = createRateLimits(deps.config, deps.log, metrics.rateLimited);
  const pipeline = createPipeline({ ...deps, limits, catalogue });
  // One document for both APIs, served under each base.
  const document = () => openApiDocument(routes);
  const rest = [resellerApi, providerApi].map((table) => ({ base: table.base, handle: mountRoutes(table, document) }));
  const yoga = createGraphQL(deps.config, pipeline, metrics);
  // The CORS allow-lists this server answers /graphql by (src/graphql/cors.ts); plain SQL only, so one entity manager serves every request.
  const cors = createCorsPolicy(deps.orm.em.fork());
  const draining = deps.draining ?? new Draining();
  draining.endsStreams(() => live.endAll());
  const server = http.createServer((req, res) => {
    const requestId = newRequestId();
    const log = deps.log.child({ request_id: requestId });
    const started = performance.now();
    res.setHeader('Request-Id', requestId);
    draining.track(res);
    res.on('finish', () => {
      const ms = performance.now() - started;
      log.info({ method: req.method, url: loggedUrl(req.url), status: res.statusCode, ms: Math.round(ms) }, 'request');
      metrics.observe(req, res.statusCode, ms / 1000);
    });
    route(deps, pipeline, rest, { yoga, cors, live }, req, res, requestId, log, metrics).catch((err: unknown) => {
      // The database unreachable is 503, logged once when it goes down (not per request).
      const down = pipeline.unavailable(err);
      if (!down) log.error({ err }, 'unhandled error');
      if (res.headersSent) return res.destroy();
      sendError(
        res,
        down ?? new DomainError('internal_error', 'An unexpected error occurred; retry with the same Idempotency-Key'),
        requestId,
      );
    });
  });
  server.on('close', () => {
    void limits.close();
    void live.stop();
    void catalogue.stop();
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerTransportError(err, socket, deps.log));
  return server;
}

/**
 * Node answers a request it cannot parse (headers over its limit, a malformed request line) with a
 * bare status line; answer in the error envelope with a Request-Id, like every other error.
 */
function answerTransportError(err: NodeJS.ErrnoException, socket: Socket, log: Logger): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  const requestId = newRequestId();
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const message = tooLarge ? 'The request headers are larger than the server accepts' : 'The request is not valid HTTP';
  const body = JSON.stringify(errorBody(validationError(tooLarge ? 'headers' : 'request', message), requestId));
  log.info({ request_id: requestId, code: err.code, status }, 'transport error');
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

async function route(
  deps: AppDeps,
  pipeline: Pipeline,
  rest: { base: string; handle: RestHandler }[],
  graphql: { yoga: GraphQLServer; cors: CorsPolicy; live: LiveEvents },
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  log: Logger,
  metrics: Metrics,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  const mounted = rest.find(({ base }) => path === base || path.startsWith(`${base}/`));
  if (mounted) return mounted.handle(pipeline, req, res, path.slice(mounted.base.length) || '/', url.search, requestId, log);
  // The REST router labels the route it matched; the other paths are their own label.
  if (['/graphql', '/healthz', '/readyz', '/metrics'].includes(path)) labelRoute(req, path);
  if (path === '/graphql') return handleGraphQL(pipeline, graphql.yoga, graphql.cors, graphql.live, req, res, url.search, requestId, log);
  const hosted = HOSTED_PATH.exec(path);
  if (hosted) {
    // Only the page's own actions name a metrics label: any other path would add a label per spelling.
    labelRoute(
      req,
      hosted[2] === undefined ? '/hosted/{secret}' : `/hosted/{secret}/${HOSTED_ACTIONS.has(hosted[2]) ? hosted[2] : '{other}'}`,
    );
    return serveHostedPage(pipeline, req, res, { secret: hosted[1], action: hosted[2], search: url.search, requestId, log });
  }
  // The example partner frontend, in development only: in production /examples is an unknown path.
  if (deps.config.NODE_ENV !== 'production' && isExamplePath(path)) {
    labelRoute(req, '/examples');
    return serveExample(req, res, path, requestId);
  }
  if (path === '/healthz' && req.method === 'GET') return sendJson(res, 200, { status: 'ok' });
  if (path === '/metrics' && req.method === 'GET') {
    // With --workers, the whole server's (src/platform/cluster-metrics.ts), not this worker's share.
    const text = cluster.isWorker ? await scrapeThroughPrimary(metrics) : await metrics.exposition();
    res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) });
    return void res.end(text);
  }
  if (path === '/readyz' && req.method === 'GET') {
    // Stopping: the load balancer takes this instance out while it still serves (docs/operator-guide.md "Stopping an instance").
    if (deps.draining?.started) return sendJson(res, 503, { status: 'shutting down' }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    try {
      await preparedRead(deps.orm.em.fork(), 'select 1', []);
      return sendJson(res, 200, { status: 'ready' });
    } catch (err) {
      if (!pipeline.unavailable(err)) log.error({ err }, 'readiness check failed');
      return sendJson(res, 503, { status: 'database unreachable' }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    }
  }
  return sendError(res, new DomainError('resource_not_found', `No such path: ${req.method} ${path}`), requestId);
}

/** The hosted page's paths (docs/partner-guide.md "Hosted sessions"): /hosted/{secret} and /hosted/{secret}/{action}. */
const HOSTED_PATH = /^\/hosted\/([^/]*)(?:\/([a-z-]+))?\/?$/;

const HOSTED_ACTIONS = new Set(['class', 'spa', 'access-code']);

/**
 * Request logs print a hosted page's path without its secret, however it is spelled: the URL is
 * percent-decoded (twice-encoded too) and its dot segments and doubled slashes resolved, as a
 * router or a proxy might, before `/hosted/{secret}` is cut; any run of 32 or more letters and
 * digits left (a secret in another place, an API key in a query) is cut as well.
 */
export function loggedUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let decoded = url;
  for (let i = 0; i < 4 && /%[0-9a-f]{2}/i.test(decoded); i++) decoded = decodeLoosely(decoded);
  let normalised = decoded;
  try {
    const parsed = new URL(decoded.replace(/[\\/]{2,}/g, '/'), 'http://localhost');
    normalised = `${parsed.pathname}${parsed.search}`;
  } catch {
    /* not a URL path: cut what it holds */
  }
  return normalised.replace(/^\/hosted\/[^/?#]*/, '/hosted/[secret]').replace(/[A-Za-z0-9_]*[A-Za-z0-9]{32,}/g, '[secret]');
}

/** Percent-decoding that keeps a sequence it cannot decode as it is. */
const decodeLoosely = (s: string): string =>
  s.replace(/(%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
  });

/** Small forms only: a hosted page's POST carries a few ids. */
const HOSTED_FORM_LIMIT = 8 * 1024;

/** The HTTP side of the hosted page: reads the form, runs the page (transport-free), writes its HTML. */
async function serveHostedPage(
  pipeline: Pipeline,
  req: IncomingMessage,
  res: ServerResponse,
  r: { secret: string; action: string | undefined; search: string; requestId: string; log: Logger },
): Promise<void> {
  let answer: PageResponse;
  try {
    const raw = req.method === 'POST' ? await readBody(req, HOSTED_FORM_LIMIT) : Buffer.alloc(0);
    const type = (header(req, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (raw.length > 0 && type !== 'application/x-www-form-urlencoded')
      throw new DomainError('validation_error', 'The page takes HTML forms only');
    // The one text rule (src/platform/text.ts) for the page's query and form as for every input.
    const query = parseQueryString(r.search);
    const form = parseQueryString(decodeUtf8(raw));
    answer = await hostedPage(pipeline, {
      method: req.method ?? 'GET',
      secret: r.secret,
      action: r.action,
      query,
      form,
      host: header(req, 'host'),
      address: clientAddress(req, pipeline.trustProxy),
      origin: header(req, 'origin'),
      fetchSite: header(req, 'sec-fetch-site'),
      requestId: r.requestId,
      log: r.log,
    });
  } catch (err) {
    const known = err instanceof DomainError ? err : pipeline.unavailable(err);
    if (!known) r.log.error({ err }, 'hosted page failed');
    answer = known ? hostedErrorPage(known.status, known.message) : hostedErrorPage(500, '');
    if (known?.headers) answer.headers = { ...answer.headers, ...known.headers };
  }
  res.writeHead(answer.status, { ...answer.headers, 'Content-Length': Buffer.byteLength(answer.body) });
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}
