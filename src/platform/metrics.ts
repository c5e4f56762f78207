// GET /metrics: Prometheus text (format 0.0.4) through prom-client — the process (CPU, memory,
// handles, event loop lag, GC), the database pool, the HTTP traffic by matched route, which
// engine ran the GraphQL operations, and the background jobs (outbox backlog, webhook attempts)
// of a process that runs them. docs/operator-guide.md "Metrics" lists every family.
// Labels are bounded sets: route templates, never raw paths, so ids cannot explode cardinality.
// With `serve --workers N` one scrape sums every process's registries (src/platform/cluster-metrics.ts).
import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Pool } from 'pg';
import { preparedRead } from '../db/engine/index.ts';

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

/**
 * The background jobs' metrics, process-wide like the process metrics: the jobs run once per
 * process (src/platform/background.ts) and every scrape of the process includes them.
 */
let backgroundRegistry: Registry | undefined;
let webhookSink: WebhookMetrics | undefined;
/** The ORMs whose outbox the backlog gauges read: those of the background jobs running in this process. */
const outboxReaders = new Set<MikroORM>();

function backgroundMetrics(): Registry {
  if (!backgroundRegistry) {
    const registers = [(backgroundRegistry = new Registry())];
    const attempts = new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome: delivered (2xx), failed (any other status, or no response), refused (a target the URL rules refuse).',
      labelNames: ['outcome'] as const,
      registers,
    });
    const failures = new Counter({
      name: 'webhook_failures_total',
      help: 'Webhook delivery attempts that did not deliver, by reason: status (a non-2xx answer), timeout, network (no answer), refused.',
      labelNames: ['reason'] as const,
      registers,
    });
    const latency = new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Time from starting a webhook delivery attempt to its answer or failure (WEBHOOK_TIMEOUT_MS at most).',
      labelNames: ['outcome'] as const,
      buckets: BUCKETS,
      registers,
    });
    webhookSink = {
      attempted(outcome, reason, seconds) {
        attempts.inc({ outcome });
        if (reason) failures.inc({ reason });
        latency.observe({ outcome }, seconds);
      },
    };
  }
  return backgroundRegistry;
}

/** What the webhook delivery loop records of each attempt (src/modules/webhooks/dispatch.ts). */
export interface WebhookMetrics {
  /** `reason` is set when the attempt did not deliver. */
  attempted(outcome: WebhookOutcome, reason: WebhookFailure | undefined, seconds: number): void;
}
export type WebhookOutcome = 'delivered' | 'failed' | 'refused';
export type WebhookFailure = 'status' | 'timeout' | 'network' | 'refused';

/** The sink this process's webhook attempts are counted in. */
export function webhookMetrics(): WebhookMetrics {
  backgroundMetrics();
  return webhookSink!;
}

/**
 * Reports the outbox backlog of `orm`'s database in this process's scrapes, read at scrape time,
 * until the returned function is called (the background jobs stop).
 */
export function reportOutbox(orm: MikroORM): () => void {
  const registry = backgroundMetrics();
  if (!registry.getSingleMetric('outbox_pending_rows')) {
    // A scrape collects both gauges at once: they share one statement.
    let read: Promise<{ rows: number; oldest: Date | null }> | undefined;
    const backlog = () =>
      (read ??= within(BACKLOG_READ_MS, readBacklog())
        // The database unreachable, or no connection free in time: the scrape answers, these two NaN.
        .catch(() => ({ rows: NaN, oldest: new Date(NaN) }))
        .finally(() => setImmediate(() => (read = undefined))));
    new Gauge({
      name: 'outbox_pending_rows',
      help: 'Outbox rows not yet handled (events to fan out to webhook endpoints, mail to send), due or waiting for a retry.',
      registers: [registry],
      async collect() {
        this.set((await backlog()).rows);
      },
    });
    new Gauge({
      name: 'outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest outbox row not yet handled (0 when none is): how far behind the outbox dispatcher is.',
      registers: [registry],
      async collect() {
        const { oldest } = await backlog();
        this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
      },
    });
  }
  outboxReaders.add(orm);
  return () => void outboxReaders.delete(orm);
}

/** How long a scrape waits for the backlog (a connection, then the statement) before reporting NaN. */
const BACKLOG_READ_MS = 1000;

function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * One statement through the partial index outbox_pending_idx (rows with processed_at null): its
 * cost grows with the backlog, not with the table. With no jobs in this process, nothing is read.
 */
async function readBacklog(): Promise<{ rows: number; oldest: Date | null }> {
  const orm = [...outboxReaders].at(-1);
  if (!orm) return { rows: 0, oldest: null };
  const [row] = await preparedRead<{ rows: number; oldest: Date | string | null }>(
    orm.em.fork(),
    'select count(*)::int as rows, min(created_at) as oldest from outbox where processed_at is null',
    [],
  );
  return { rows: Number(row.rows), oldest: row.oldest === null ? null : new Date(row.oldest) };
}

export type ExecutionEngine = 'compiled' | 'graphql-js';

export interface Metrics {
  /** Records one answered request under the route `labelRoute` gave it (else `unmatched`). */
  observe(req: IncomingMessage, status: number, seconds: number): void;
  /** Records one GraphQL operation reaching execution, by the engine that runs it (src/graphql/compiled-execution.ts). */
  executed(engine: ExecutionEngine): void;
  /** Records one request refused by a rate limit, by its kind (src/platform/rate-limits.ts). */
  rateLimited(kind: string): void;
  /** Records one catalogue change notification heard, by the kept table it names or `other` (src/platform/catalogue-cache.ts). */
  catalogueChangeHeard(table: string): void;
  /** The current values in the Prometheus text format; pool gauges are read now. */
  exposition(): Promise<string>;
  /** The same values as prom-client's JSON, for the cluster's primary to sum with the other processes'. */
  json(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

/**
 * `pool` gives the ORM's `pg` pool (MikroORM: `orm.driver.getConnection().getNativeClient()`);
 * `subscriptions`, this server's open subscription streams and their limit (SUBSCRIPTIONS_MAX).
 */
export function createMetrics(options: {
  pool: () => Promise<Pool>;
  subscriptions: () => { open: number; max: number };
  /** Whether the process keeps catalogue rows now (src/platform/catalogue-cache.ts); absent, the gauge reads 0. */
  catalogueListening?: () => boolean;
}): Metrics {
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
  const catalogueChanges = new Counter({
    name: 'catalogue_changes_heard_total',
    help: 'Catalogue change notifications this process heard, by table (other: a payload naming no kept table); each makes it read that table again.',
    labelNames: ['table'] as const,
    registers,
  });
  new Gauge({
    name: 'catalogue_listening',
    help: 'Whether this process listens for catalogue changes (1) and so keeps providers between requests, or reads them on every request (0).',
    registers,
    collect() {
      this.set(options.catalogueListening?.() ? 1 : 0);
    },
  });
  poolGauges(options.pool, registers);
  // Read at scrape time; with `--workers N` the cluster's scrape sums them, as the pool's.
  new Gauge({
    name: 'graphql_subscriptions_open',
    help: 'Open GraphQL subscription streams (Server-Sent Events) this server serves.',
    registers,
    collect() {
      this.set(options.subscriptions().open);
    },
  });
  new Gauge({
    name: 'graphql_subscriptions_max',
    help: 'The most subscription streams this server serves at once (SUBSCRIPTIONS_MAX per process); one more is answered 503.',
    registers,
    collect() {
      this.set(options.subscriptions().max);
    },
  });

  return {
    rateLimited: (kind) => rejections.inc({ limit: kind }),
    catalogueChangeHeard: (table) => catalogueChanges.inc({ table }),
    observe(req, status, seconds) {
      const method = req.method && METHODS.has(req.method) ? req.method : 'OTHER';
      traffic.observe(method, routeLabels.get(req) ?? UNMATCHED_ROUTE, status, seconds);
    },
    executed(engine) {
      executions.inc({ engine });
    },
    async exposition() {
      // Each registry's text ends with a newline, so they join into one valid exposition.
      return (await processMetrics().metrics()) + (await registry.metrics()) + (await backgroundMetrics().metrics());
    },
    json: () => json([processMetrics(), registry, backgroundMetrics()]),
  };
}

/**
 * The metrics of a process that serves no HTTP but holds a pool and may run the background jobs:
 * the primary of `serve --workers N` (its part of the cluster's scrape) and `worker` (METRICS_PORT).
 */
export function createProcessMetrics(options: { pool: () => Promise<Pool> }): Pick<Metrics, 'exposition' | 'json'> {
  const registry = new Registry();
  poolGauges(options.pool, [registry]);
  return {
    async exposition() {
      return (await processMetrics().metrics()) + (await registry.metrics()) + (await backgroundMetrics().metrics());
    },
    json: () => json([processMetrics(), registry, backgroundMetrics()]),
  };
}

async function json(registries: Registry[]): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
  return (await Promise.all(registries.map((r) => r.getMetricsAsJSON()))).flat();
}

/** The pool's gauges, read at scrape time; with `--workers N` the cluster's scrape sums them over the processes. */
function poolGauges(pool: () => Promise<Pool>, registers: Registry[]): void {
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
