import http from 'node:http';
import type net from 'node:net';
import { METRICS_CONTENT_TYPE, type Metrics } from './metrics.ts';

// `worker` serves no API, yet runs the jobs whose metrics matter (outbox backlog, webhook attempts):
// with METRICS_PORT it answers GET /metrics and GET /healthz there, and nothing else
// (docs/operator-guide.md "Metrics").

/** Listens on `host`:`port` (0: a free one) and resolves with the port it has. */
export function listenForScrapes(host: string, port: number, metrics: Pick<Metrics, 'exposition'>): Promise<number> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/healthz')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return void res.end('GET /metrics or GET /healthz\n');
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
      return void res.end('{"status":"ok"}');
    }
    metrics.exposition().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      },
      (err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`metrics unavailable: ${(err as Error).message}\n`);
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });
}
