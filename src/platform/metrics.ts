// Prometheus text exposition (format 0.0.4) of the HTTP traffic, for GET /metrics.
// Labels are bounded sets: route templates, never raw paths, so ids cannot explode cardinality.

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Seconds; the Prometheus client defaults, which cover both a health check and a slow page. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface RouteTemplate { method: string; path: string }

export interface HttpMetrics {
  /** Records one answered request; `url` is the raw request URL, reduced here to its template. */
  observe(method: string | undefined, url: string | undefined, status: number, seconds: number): void;
  /** The current values in the Prometheus text format. */
  exposition(): string;
}

/**
 * `base` and `routes` are the V3 route table (paths with {name} parameters); `fixedPaths` are
 * other paths counted as themselves. Everything else is counted as route "other".
 */
export function createHttpMetrics(options: { base: string; routes: readonly RouteTemplate[]; fixedPaths: readonly string[] }): HttpMetrics {
  const templates = options.routes.map((r) => ({
    method: r.method,
    path: r.path,
    pattern: new RegExp(`^${r.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
  }));
  const fixed = new Set(options.fixedPaths);
  const requests = new Map<string, number>();
  const durations = new Map<string, { buckets: number[]; sum: number; count: number }>();

  function routeOf(method: string, url: string): string {
    const path = pathnameOf(url);
    if (path === options.base || path.startsWith(`${options.base}/`)) {
      const sub = path.slice(options.base.length) || '/';
      // First match in table order, as the router dispatches.
      const match = templates.find((t) => t.method === method && t.pattern.test(sub));
      if (match) return match.path;
    }
    return fixed.has(path) ? path : 'other';
  }

  return {
    observe(rawMethod, url, status, seconds) {
      const method = rawMethod && METHODS.has(rawMethod) ? rawMethod : 'OTHER';
      const route = routeOf(method, url ?? '/');
      const counterKey = labels({ method, route, status: String(status) });
      requests.set(counterKey, (requests.get(counterKey) ?? 0) + 1);
      const histogramKey = labels({ method, route });
      const h = durations.get(histogramKey) ?? { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 };
      durations.set(histogramKey, h);
      BUCKETS.forEach((le, i) => { if (seconds <= le) h.buckets[i] += 1; });
      h.sum += seconds;
      h.count += 1;
    },
    exposition() {
      const lines = [
        '# HELP http_requests_total HTTP requests answered, by method, route template and status.',
        '# TYPE http_requests_total counter',
      ];
      for (const [key, n] of requests) lines.push(`http_requests_total{${key}} ${n}`);
      lines.push(
        '# HELP http_request_duration_seconds Time from receiving a request to finishing its response.',
        '# TYPE http_request_duration_seconds histogram',
      );
      for (const [key, h] of durations) {
        BUCKETS.forEach((le, i) => lines.push(`http_request_duration_seconds_bucket{${key},le="${le}"} ${h.buckets[i]}`));
        lines.push(
          `http_request_duration_seconds_bucket{${key},le="+Inf"} ${h.count}`,
          `http_request_duration_seconds_sum{${key}} ${h.sum}`,
          `http_request_duration_seconds_count{${key}} ${h.count}`,
        );
      }
      return `${lines.join('\n')}\n`;
    },
  };
}

/** The pathname as the server's router sees it (URL-normalised). */
function pathnameOf(url: string): string {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return '';
  }
}

function labels(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
}
