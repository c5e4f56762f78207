import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller, issuePass, createPassPackage } from '../support/factories.ts';
import { call, gql, v3 } from '../support/http.ts';

const app = useApp();

/** The samples of one metric family, keyed by their label set as written. */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (m && m[1] === name) found.set(m[2], Number(m[3]));
  }
  return found;
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
    await gql(app, reseller.key, '{ __typename }');
    await call(app, `/no/such/path/${client_id}`);

    const res = await call(app, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toContain('# TYPE http_requests_total counter');
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');

    const requests = samples(res.text, 'http_requests_total');
    expect(requests.get('method="POST",route="/issued_passes",status="201"')).toBe(1);
    expect(requests.get('method="GET",route="/issued_passes/{client_id}",status="200"')).toBe(1);
    expect(requests.get('method="GET",route="/issued_passes/{client_id}",status="404"')).toBe(1);
    expect(requests.get('method="GET",route="/passes",status="200"')).toBe(1);
    expect(requests.get('method="GET",route="/passes",status="401"')).toBe(1);
    expect(requests.get('method="POST",route="/graphql",status="200"')).toBe(1);
    expect(requests.get('method="GET",route="other",status="404"')).toBe(1);
    // Raw paths never become labels: ids would make the series unbounded.
    expect(res.text).not.toContain(client_id);

    const counts = samples(res.text, 'http_request_duration_seconds_count');
    expect(counts.get('method="GET",route="/issued_passes/{client_id}"')).toBe(2);
    const buckets = samples(res.text, 'http_request_duration_seconds_bucket');
    expect(buckets.get('method="GET",route="/issued_passes/{client_id}",le="+Inf"')).toBe(2);
    const sum = samples(res.text, 'http_request_duration_seconds_sum').get('method="GET",route="/issued_passes/{client_id}"');
    expect(sum).toBeGreaterThan(0);
  });

  it('buckets are cumulative and the scrape itself is counted by the next one', async () => {
    await call(app, '/healthz');
    await call(app, '/metrics');
    const text = (await call(app, '/metrics')).text;
    expect(samples(text, 'http_requests_total').get('method="GET",route="/metrics",status="200"')).toBeGreaterThanOrEqual(2);
    for (const [labels, count] of samples(text, 'http_request_duration_seconds_count')) {
      const series = [...samples(text, 'http_request_duration_seconds_bucket')]
        .filter(([key]) => key.startsWith(`${labels},le=`)).map(([, n]) => n);
      expect(series.length, labels).toBe(12);
      expect(series, labels).toEqual([...series].sort((a, b) => a - b));
      expect(series.at(-1), labels).toBe(count);
    }
  });
});
