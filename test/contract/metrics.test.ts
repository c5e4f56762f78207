import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller, issuePass, createPassPackage } from '../support/factories.ts';
import { call, gql, v3, V3 } from '../support/http.ts';
import { samples } from '../support/metrics.ts';

const app = useApp();

/** The value of a sample without labels. */
function value(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('GET /metrics', () => {
  it('counts requests by method, route template and status, without a key, in the Prometheus text format', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const { client_id } = await issuePass(app, reseller, pass.id);
    await v3(app, `/issued_passes/${client_id}`, { key: reseller.key });
    await v3(app, '/issued_passes/client_01J0000000000000000000000', { key: reseller.key });
    await v3(app, '/passes', { key: reseller.key });
    await v3(app, '/passes');
    await call(app, `${V3}/passes`, { method: 'PUT', key: reseller.key });
    await gql(app, reseller.key, '{ __typename }');
    await call(app, `/no/such/path/${client_id}`);
    await call(app, `${V3}/no/such/${client_id}`);

    const res = await call(app, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toContain('# TYPE http_requests_total counter');
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');

    const requests = samples(res.text, 'http_requests_total');
    expect(requests.get(`method="POST",route="${V3}/issued_passes",status="201"`)).toBe(1);
    expect(requests.get(`method="GET",route="${V3}/issued_passes/{client_id}",status="200"`)).toBe(1);
    expect(requests.get(`method="GET",route="${V3}/issued_passes/{client_id}",status="404"`)).toBe(1);
    expect(requests.get(`method="GET",route="${V3}/passes",status="200"`)).toBe(1);
    expect(requests.get(`method="GET",route="${V3}/passes",status="401"`)).toBe(1);
    expect(requests.get('method="POST",route="/graphql",status="200"')).toBe(1);
    // Unknown paths, inside the V3 base or not, and a method a path does not take share one label.
    expect(requests.get('method="GET",route="unmatched",status="404"')).toBe(2);
    expect(requests.get('method="PUT",route="unmatched",status="405"')).toBe(1);
    // Raw paths never become labels: ids would make the series unbounded.
    expect(res.text).not.toContain(client_id);
    expect(res.text).not.toContain('client_01J0000000000000000000000');

    const counts = samples(res.text, 'http_request_duration_seconds_count');
    expect(counts.get(`method="GET",route="${V3}/issued_passes/{client_id}"`)).toBe(2);
    const buckets = samples(res.text, 'http_request_duration_seconds_bucket');
    expect(buckets.get(`le="+Inf",method="GET",route="${V3}/issued_passes/{client_id}"`)).toBe(2);
    const sum = samples(res.text, 'http_request_duration_seconds_sum').get(`method="GET",route="${V3}/issued_passes/{client_id}"`);
    expect(sum).toBeGreaterThan(0);
  });

  it('labels the hosted page by its template: never its secret, never a made-up action', async () => {
    const secret = `hss_${'A'.repeat(40)}`;
    await call(app, `/hosted/${secret}`);
    await call(app, `/hosted/${secret}/class`, {
      method: 'POST',
      raw: 'class_instance_id=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    await call(app, `/hosted/${secret}/made-up-action`);
    const text = (await call(app, '/metrics')).text;
    const requests = samples(text, 'http_requests_total');
    expect(requests.get('method="GET",route="/hosted/{secret}",status="404"')).toBe(1);
    expect(requests.get('method="POST",route="/hosted/{secret}/class",status="404"')).toBe(1);
    expect(requests.get('method="GET",route="/hosted/{secret}/{other}",status="404"')).toBe(1);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('made-up-action');
  });

  it('exposes the process, event loop, GC and database pool besides HTTP', async () => {
    const text = (await call(app, '/metrics')).text;
    for (const [family, type] of [
      ['process_cpu_user_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['process_start_time_seconds', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_eventloop_lag_p99_seconds', 'gauge'],
      ['nodejs_gc_duration_seconds', 'histogram'],
      ['db_pool_max_connections', 'gauge'],
      ['db_pool_connections', 'gauge'],
      ['db_pool_waiting_requests', 'gauge'],
    ]) {
      expect(text, family).toContain(`# TYPE ${family} ${type}\n`);
    }
    expect(value(text, 'db_pool_max_connections')).toBe(app.config.DB_POOL_MAX);
    const pool = samples(text, 'db_pool_connections');
    // The app has run queries, so the pool holds at least one connection, none beyond its maximum.
    const open = (pool.get('state="idle"') ?? NaN) + (pool.get('state="in_use"') ?? NaN);
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(app.config.DB_POOL_MAX);
    expect(value(text, 'db_pool_waiting_requests')).toBe(0);
  });

  it('the pool gauges are read at scrape time: a held connection shows as in use', async () => {
    const em = app.orm.em.fork();
    await em.transactional(async (tx) => {
      await tx.execute('select 1');
      const pool = samples((await call(app, '/metrics')).text, 'db_pool_connections');
      expect(pool.get('state="in_use"')).toBeGreaterThanOrEqual(1);
    });
  });

  it('every line is a comment, a blank line or a sample of a family declared by # TYPE', async () => {
    const text = (await call(app, '/metrics')).text;
    const declared = new Map<string, string>();
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) {
        expect(declared.has(type[1]), `${type[1]} declared twice`).toBe(false);
        declared.set(type[1], type[2]);
        continue;
      }
      if (line === '' || line.startsWith('# HELP ')) continue;
      // prom-client writes NaN as "Nan"; Prometheus reads values with Go's ParseFloat, which ignores case.
      const sample = /^(\w+)(\{(\w+="(?:[^"\\]|\\.)*",?)*\})? (-?[\d.e+-]+|NaN|Nan|[+-]Inf)$/.exec(line);
      expect(sample, line).not.toBeNull();
      const name = sample![1];
      const family = declared.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
      expect(declared.has(family), `${name} has no # TYPE`).toBe(true);
    }
    expect(text.endsWith('\n')).toBe(true);
  });

  it('buckets are cumulative and the scrape itself is counted by the next one', async () => {
    await call(app, '/healthz');
    await call(app, '/metrics');
    const text = (await call(app, '/metrics')).text;
    expect(samples(text, 'http_requests_total').get('method="GET",route="/metrics",status="200"')).toBeGreaterThanOrEqual(2);
    expect(samples(text, 'http_requests_total').get('method="GET",route="/healthz",status="200"')).toBeGreaterThanOrEqual(1);
    for (const [labels, count] of samples(text, 'http_request_duration_seconds_count')) {
      const series = [...samples(text, 'http_request_duration_seconds_bucket')]
        .filter(([key]) => key.startsWith('le=') && key.endsWith(`,${labels}`))
        .map(([, n]) => n);
      expect(series.length, labels).toBe(12);
      expect(series, labels).toEqual([...series].sort((a, b) => a - b));
      expect(series.at(-1), labels).toBe(count);
    }
  });
});
