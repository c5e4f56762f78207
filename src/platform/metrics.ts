// GET /metrics: Prometheus text (format 0.0.4) through prom-client — the process (CPU, memory,
// handles, event loop lag, GC), the database pool, the HTTP traffic by matched route, and which
// engine ran the GraphQL operations.
// Labels are bounded sets: route templates, never raw paths, so ids cannot explode cardinality.
import type { IncomingMessage } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pool } from 'pg';

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The route label of a request no route matched (unknown path, or a method the path does not take). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Seconds; the Prometheus client defaults, which cover both a health check and a slow page. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

// Set by whoever dispatches the request (the REST router, server.ts), read when the response finishes.
const routeLabels = new WeakMap<IncomingMessage, string>();

/** Names the route template (e.g. `/v3/api/business/reseller/issued_passes/{client_id}`) `req` matched. */
export function labelRoute(req: IncomingMessage, route: string): void {
  routeLabels.set(req, route);
}

// Process-wide: the GC observer and the event-loop histogram exist once per process, however many
// servers it builds (the tests build several); each server's scrape includes them.
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export type ExecutionEngine = 'compiled' | 'graphql-js';

export interface Metrics {
  /** Records one answered request under the route `labelRoute` gave it (else `unmatched`). */
  observe(req: IncomingMessage, status: number, seconds: number): void;
  /** Records one GraphQL operation reaching execution, by the engine that runs it (src/graphql/compiled-execution.ts). */
  executed(engine: ExecutionEngine): void;
  /** Records one request refused by a rate limit, by its kind (src/platform/rate-limits.ts). */
  rateLimited(kind: string): void;
  /** The current values in the Prometheus text format; pool gauges are read now. */
  exposition(): Promise<string>;
}

/** `pool` gives the ORM's `pg` pool (MikroORM: `orm.driver.getConnection().getNativeClient()`). */
export function createMetrics(options: { pool: () => Promise<Pool> }): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const traffic = new Traffic();
  new TrafficCounter(traffic, registers);
  new TrafficHistogram(traffic, registers);
  const executions = new Counter({
    name: 'graphql_executions_total',
    help: 'GraphQL operations reaching execution, by engine: compiled (a document without string literals that ran before) or graphql-js.',
    labelNames: ['engine'] as const,
    registers,
  });
  const rejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests answered 429 rate_limited, by limit: key (an API key or lookup token), failed_auth (a client address), redeem (a provider key).',
    labelNames: ['limit'] as const,
    registers,
  });
  const pool = options.pool;
  new Gauge({
    name: 'db_pool_max_connections',
    help: 'The most connections the database pool opens (DB_POOL_MAX).',
    registers,
    async collect() {
      this.set((await pool()).options.max ?? 0);
    },
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Open database pool connections, by state: idle, or in use by a request or job.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const p = await pool();
      this.set({ state: 'idle' }, p.idleCount);
      this.set({ state: 'in_use' }, p.totalCount - p.idleCount);
    },
  });
  new Gauge({
    name: 'db_pool_waiting_requests',
    help: 'Requests for a database connection waiting because the pool is at its maximum.',
    registers,
    async collect() {
      this.set((await pool()).waitingCount);
    },
  });

  return {
    rateLimited: (kind) => rejections.inc({ limit: kind }),
    observe(req, status, seconds) {
      const method = req.method && METHODS.has(req.method) ? req.method : 'OTHER';
      traffic.observe(method, routeLabels.get(req) ?? UNMATCHED_ROUTE, status, seconds);
    },
    executed(engine) {
      executions.inc({ engine });
    },
    async exposition() {
      // Each registry's text ends with a newline, so the two join into one valid exposition.
      return (await processMetrics().metrics()) + (await registry.metrics());
    },
  };
}

/**
 * The HTTP traffic of every request (http_requests_total, http_request_duration_seconds), counted
 * in plain maps and turned into prom-client's values only when scraped. prom-client's own inc and
 * observe validate and hash their label set on each call, a visible share of a GraphQL `passes`
 * request's CPU (docs/adr/0012-cheaper-request-edges-provider-tier-jit-off.md); here a request costs two map lookups.
 */
class Traffic {
  /** By method, route and status. */
  readonly requests = new Map<string, { method: string; route: string; status: string; count: number }>();
  /** By method and route: the count in each bucket (not cumulative), then in none (+Inf), the sum. */
  readonly durations = new Map<string, { method: string; route: string; buckets: number[]; sum: number; count: number }>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    const statusKey = `${key} ${status}`;
    const counted = this.requests.get(statusKey);
    if (counted) counted.count++;
    else this.requests.set(statusKey, { method, route, status: String(status), count: 1 });
    let timed = this.durations.get(key);
    if (!timed)
      this.durations.set(key, (timed = { method, route, buckets: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 }));
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]) bucket++;
    timed.buckets[bucket]++;
    timed.sum += seconds;
    timed.count++;
  }
}

// prom-client types a registry's metrics as its own classes; these are theirs, with the values of
// their get() read from Traffic in the shapes they give (the bucket series carry `le`, which the
// label type leaves out, as prom-client's own do), so the exposition is theirs, byte for byte.
const HELP = {
  requests: 'HTTP requests answered, by method, route template and status.',
  durations: 'Time from receiving a request to finishing its response.',
};

type Shape<M extends { get(): Promise<unknown> }> = Awaited<ReturnType<M['get']>>;

class TrafficCounter extends Counter<'method' | 'route' | 'status'> {
  private readonly traffic: Traffic;

  constructor(traffic: Traffic, registers: Registry[]) {
    super({ name: 'http_requests_total', help: HELP.requests, labelNames: ['method', 'route', 'status'], registers });
    this.traffic = traffic;
  }

  override async get(): Promise<Shape<Counter>> {
    const values = [...this.traffic.requests.values()].map(({ method, route, status, count }) => ({
      labels: { method, route, status },
      value: count,
    }));
    return { ...(await super.get()), values };
  }
}

class TrafficHistogram extends Histogram<'method' | 'route'> {
  private readonly traffic: Traffic;

  constructor(traffic: Traffic, registers: Registry[]) {
    super({ name: 'http_request_duration_seconds', help: HELP.durations, labelNames: ['method', 'route'], buckets: BUCKETS, registers });
    this.traffic = traffic;
  }

  override async get(): Promise<Shape<Histogram>> {
    const name = 'http_request_duration_seconds';
    const values = [...this.traffic.durations.values()].flatMap(({ method, route, buckets, sum, count }) => {
      let below = 0;
      return [
        ...[...BUCKETS, '+Inf'].map((le, i) => ({
          labels: { le, method, route } as Record<string, string | number>,
          value: (below += buckets[i]),
          metricName: `${name}_bucket`,
        })),
        { labels: { method, route }, value: sum, metricName: `${name}_sum` },
        { labels: { method, route }, value: count, metricName: `${name}_count` },
      ];
    });
    // Not super.get(), which reads getForPromString below. The d.ts types `type` as an enum that
    // does not exist at run time; the registry writes this string, as prom-client's own get gives it.
    return { name, help: HELP.durations, type: 'histogram', aggregator: 'sum', values } as unknown as Shape<Histogram>;
  }

  /** The registry's exposition asks for this instead of get() (prom-client's shares the non-`le` labels): the same values. */
  getForPromString(): Promise<Shape<Histogram>> {
    return this.get();
  }
}
