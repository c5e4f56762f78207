import type { IncomingMessage } from 'node:http';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, labelRoute } from '../../src/platform/metrics.ts';

// The HTTP traffic metrics are counted in plain maps and read into prom-client's shapes at scrape
// (src/platform/metrics.ts): for the same observations, the exposition must be what prom-client's
// own Counter and Histogram write, line for line (bucket edges, escaping, the order of the series).
const HELP_REQUESTS = 'HTTP requests answered, by method, route template and status.';
const HELP_DURATIONS = 'Time from receiving a request to finishing its response.';
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const trafficLines = (text: string) => text.split('\n').filter((line) => line.includes('http_request'));

describe('HTTP traffic metrics', () => {
  it("write what prom-client's Counter and Histogram write for the same requests", async () => {
    const metrics = createMetrics({
      pool: async () => ({ options: { max: 1 }, idleCount: 0, totalCount: 0, waitingCount: 0 }) as never,
      subscriptions: () => ({ open: 0, max: 1 }),
    });
    const registry = new Registry();
    const counter = new Counter({
      name: 'http_requests_total',
      help: HELP_REQUESTS,
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: HELP_DURATIONS,
      labelNames: ['method', 'route'],
      buckets: BUCKETS,
      registers: [registry],
    });
    const observed: [string, string, number, number][] = [
      ['GET', '/v3/api/business/reseller/passes', 200, 0.003],
      ['POST', '/graphql', 200, 0.3],
      ['GET', '/v3/api/business/reseller/passes', 200, 0.005], // on a bucket's edge: counted in it
      ['POST', '/graphql', 400, 12], // past the last bucket: +Inf only
      ['GET', '/v3/api/business/reseller/passes', 404, 0.0101],
      ['GET', 'a "quoted" \\ route\nwith a newline', 200, 1], // escaped as prom-client escapes labels
    ];
    for (const [method, route, status, seconds] of observed) {
      const req = { method } as IncomingMessage;
      labelRoute(req, route);
      metrics.observe(req, status, seconds);
      counter.inc({ method, route, status: String(status) });
      histogram.observe({ method, route }, seconds);
    }
    const ours = trafficLines(await metrics.exposition());
    expect(ours.length).toBeGreaterThan(observed.length);
    expect(ours).toEqual(trafficLines(await registry.metrics()));
  });
});
