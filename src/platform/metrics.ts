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
  /** The current values in the Prometheus text format; pool gauges are read now. */
  exposition(): Promise<string>;
}

/** `pool` gives the ORM's `pg` pool (MikroORM: `orm.driver.getConnection().getNativeClient()`). */
export function createMetrics(options: { pool: () => Promise<Pool> }): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const, registers,
  });
  const durations = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time from receiving a request to finishing its response.',
    labelNames: ['method', 'route'] as const, buckets: BUCKETS, registers,
  });
  const executions = new Counter({
    name: 'graphql_executions_total',
    help: 'GraphQL operations reaching execution, by engine: compiled (a document without string literals that ran before) or graphql-js.',
    labelNames: ['engine'] as const, registers,
  });
  const pool = options.pool;
  new Gauge({
    name: 'db_pool_max_connections', help: 'The most connections the database pool opens (DB_POOL_MAX).', registers,
    async collect() { this.set((await pool()).options.max ?? 0); },
  });
  new Gauge({
    name: 'db_pool_connections', help: 'Open database pool connections, by state: idle, or in use by a request or job.',
    labelNames: ['state'] as const, registers,
    async collect() {
      const p = await pool();
      this.set({ state: 'idle' }, p.idleCount);
      this.set({ state: 'in_use' }, p.totalCount - p.idleCount);
    },
  });
  new Gauge({
    name: 'db_pool_waiting_requests', help: 'Requests for a database connection waiting because the pool is at its maximum.', registers,
    async collect() { this.set((await pool()).waitingCount); },
  });

  return {
    observe(req, status, seconds) {
      const method = req.method && METHODS.has(req.method) ? req.method : 'OTHER';
      const route = routeLabels.get(req) ?? UNMATCHED_ROUTE;
      requests.inc({ method, route, status: String(status) });
      durations.observe({ method, route }, seconds);
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
