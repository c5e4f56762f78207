import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';
import { V3 } from '../support/http.ts';
import { Draining, drainAndClose } from '../../src/platform/shutdown.ts';
import { killStartedProcesses, Service } from './processes.ts';

const app = useApp();

// A graceful stop (docs/operator-guide.md "Stopping an instance"), on real processes: on SIGTERM
// /readyz answers 503 at once while every other request is still served for SHUTDOWN_DRAIN_MS;
// then the listener closes, the requests in flight finish with their normal answer, background
// jobs stop, and the process exits 0, one log line per phase.

const T = 120_000;
// Long enough for the requests the tests send during it on a busy machine.
const DRAIN_MS = 3000;

afterAll(async () => {
  await killStartedProcesses();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (no agent), so each answer's Connection header is its own. */
function request(base: string, path: string, opts: { key?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      { agent: false, headers: opts.key ? { Authorization: `Bearer ${opts.key}` } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A GraphQL query on its own connection. */
function graphql(base: string, key: string, query: string): Promise<Answer> {
  const body = JSON.stringify({ query });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/graphql`,
      {
        method: 'POST',
        agent: false,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let received = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (received += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: received }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A POST whose body is sent in two halves: in flight from the first until `finish()` sends the rest. */
function slowPost(base: string, path: string, key: string, idempotencyKey: string, body: object) {
  const text = JSON.stringify(body);
  const half = Math.floor(text.length / 2);
  const req = http.request(`${base}${path}`, {
    method: 'POST',
    agent: false,
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'Idempotency-Key': idempotencyKey,
    },
  });
  const answered = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let received = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (received += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: received }));
    });
    req.on('error', reject);
  });
  req.write(text.slice(0, half));
  return { answered, finish: () => req.end(text.slice(half)) };
}

const msgs = (service: Service) => service.logLines().map((l) => l.msg);

describe('serve', () => {
  it(
    'SIGTERM: /readyz 503 at once, other requests served through the drain, then new connections refused, the write in flight finished once, exit 0',
    async () => {
      // A reseller of its own, so the database is not empty and serve seeds nothing.
      const reseller = await createReseller(app, { balance: 1_000_000 });
      const pass = await createPassPackage(app, reseller);
      const service = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
      await service.waitForStdout(/"msg":"listening"/, 90_000);
      const base = service.logLines().find((l) => l.msg === 'listening')!.url as string;
      expect((await request(base, '/readyz')).status).toBe(200);

      const email = 'ada.shutdown@example.com';
      const slow = slowPost(base, `${V3}/issued_passes`, reseller.key, 'in-flight-at-sigterm', {
        pass_id: pass.id,
        first_name: 'Ada',
        last_name: 'Lovelace',
        email,
      });
      // The request's headers reach the server with the first half of its body; give it a moment to be read.
      await new Promise((r) => setTimeout(r, 300));

      service.child.kill('SIGTERM');
      await service.waitForStdout(/"msg":"shutting down"/);
      const readyz = await request(base, '/readyz');
      expect(readyz.status).toBe(503);
      expect(JSON.parse(readyz.body)).toEqual({ status: 'shutting down' });
      expect(readyz.headers['retry-after']).toMatch(/^\d+$/);
      // Still served, each answer closing its connection so the client reconnects (elsewhere, behind a load balancer).
      const healthz = await request(base, '/healthz');
      expect(healthz.status).toBe(200);
      expect(healthz.headers.connection).toBe('close');
      const passes = await request(base, `${V3}/passes`, { key: reseller.key });
      expect(passes.status).toBe(200);
      expect(passes.headers.connection).toBe('close');
      const typename = await graphql(base, reseller.key, '{ __typename }');
      expect(typename.status, typename.body).toBe(200);
      expect(typename.headers.connection).toBe('close');
      expect(msgs(service)).not.toContain('listener closed');

      await service.waitForStdout(/"msg":"listener closed"/);
      await expect(request(base, '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(service.running).toBe(true); // waiting for the request in flight

      slow.finish();
      const issued = await slow.answered;
      expect(issued.status, issued.body).toBe(201);
      expect(issued.headers.connection).toBe('close');
      const { client_id: clientId } = JSON.parse(issued.body) as { client_id: string };

      expect(await service.exited).toEqual({ code: 0, signal: null });
      const lines = service.logLines();
      const at = (msg: string) => lines.findIndex((l) => l.msg === msg);
      const phases = ['shutting down', 'listener closed', 'in-flight requests finished', 'stopped'];
      expect(
        phases.map(at).every((i, n, all) => i >= 0 && (n === 0 || i > all[n - 1])),
        msgs(service).join('\n'),
      ).toBe(true);
      expect(lines[at('shutting down')]).toMatchObject({ signal: 'SIGTERM', drain_ms: DRAIN_MS });
      expect(lines[at('listener closed')]).toMatchObject({ in_flight: 1 });
      expect((lines[at('listener closed')].time as number) - (lines[at('shutting down')].time as number)).toBeGreaterThanOrEqual(DRAIN_MS);

      // The write in flight took effect exactly once.
      const [clients] = await app.sql<{ n: string }>('select count(*) as n from client where email = ?', [email]);
      expect(Number(clients.n)).toBe(1);
      const [passesIssued] = await app.sql<{ n: string }>('select count(*) as n from issued_pass where client_id = ?', [clientId]);
      expect(Number(passesIssued.n)).toBe(1);
    },
    T,
  );

  it(
    'a second signal more than a second after the first exits at once with 128 + its number',
    async () => {
      const service = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', SHUTDOWN_DRAIN_MS: '60000' });
      await service.waitForStdout(/"msg":"listening"/, 90_000);
      service.child.kill('SIGTERM');
      await service.waitForStdout(/"msg":"shutting down"/);
      await new Promise((r) => setTimeout(r, 1100));
      expect(service.running).toBe(true); // draining
      service.child.kill('SIGINT');
      expect(await service.exited).toEqual({ code: 130, signal: null });
      expect(service.logLines().find((l) => l.msg === 'second signal: exiting at once')).toMatchObject({ signal: 'SIGINT' });
    },
    T,
  );
});

describe('serve --workers 2', () => {
  it(
    'Ctrl-C (SIGINT to the primary and each worker at once): /readyz 503, each worker stops once, exit 0',
    async () => {
      const service = new Service(['serve', '--workers', '2'], {
        DATABASE_URL: app.databaseUrl,
        PORT: '0',
        SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      });
      await service.waitForStdout(/"msg":"listening"/, 90_000);
      const base = service.logLines().find((l) => l.msg === 'listening')!.url as string;
      // Each worker answers a few of these, and so logs its pid.
      for (let i = 0; i < 10; i++) expect((await request(base, '/readyz')).status).toBe(200);
      const workerPids = () =>
        new Set(service.logLines().flatMap((l) => (typeof l.pid === 'number' && l.pid !== service.child.pid ? [l.pid] : [])));
      for (let i = 0; i < 100 && workerPids().size < 2; i++) await new Promise((r) => setTimeout(r, 50));
      const workers = [...workerPids()];
      expect(workers).toHaveLength(2);

      // What a terminal's Ctrl-C does: the signal reaches every process of the group; the primary also tells each worker.
      for (const pid of [service.child.pid!, ...workers]) process.kill(pid, 'SIGINT');
      for (const pid of workers) await service.waitForStdout(new RegExp(`"pid":${pid}.*"msg":"shutting down"`));
      // Both workers are draining: whichever answers says 503.
      for (let i = 0; i < 4; i++) expect((await request(base, '/readyz')).status).toBe(503);
      expect((await request(base, '/healthz')).status).toBe(200);

      expect(await service.exited).toEqual({ code: 0, signal: null });
      const lines = service.logLines();
      for (const pid of workers) {
        const own = lines.filter((l) => l.pid === pid).map((l) => l.msg);
        for (const phase of ['shutting down', 'listener closed', 'in-flight requests finished', 'stopped'])
          expect(
            own.filter((m) => m === phase),
            `worker ${pid}: ${phase}`,
          ).toHaveLength(1);
      }
      const primary = lines.filter((l) => l.pid === service.child.pid || l.pid === undefined).map((l) => l.msg);
      expect(primary).toContain('HTTP workers stopped');
      expect(primary.filter((m) => m === 'stopped')).toHaveLength(1);
    },
    T,
  );
});

describe('worker', () => {
  it(
    'SIGTERM: the background jobs stop after their unit, exit 0',
    async () => {
      const worker = new Service(['worker'], { DATABASE_URL: app.databaseUrl, OUTBOX_POLL_MS: '20', IDEMPOTENCY_SWEEP_MS: '20' });
      await worker.waitForStdout(/"msg":"worker started"/);
      // Polling every 20 ms: the signal finds a unit running or about to.
      await new Promise((r) => setTimeout(r, 200));
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      expect(worker.logLines().map((l) => l.msg)).toEqual(['worker started', 'shutting down', 'stopped']);
    },
    T,
  );
});

describe('the in-flight limit', () => {
  it('a request still running at the limit has its connection cut, and a warning says how many', async () => {
    // The server's own stop on a server whose one request never answers; the limit made short.
    const draining = new Draining();
    const server = http.createServer((_req, res) => draining.track(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const lines: Record<string, unknown>[] = [];
    const log = pino({ base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const hanging = request(`http://127.0.0.1:${port}`, '/never');
    while (draining.inFlight === 0) await new Promise((r) => setTimeout(r, 10));
    await drainAndClose(server, draining, { drainMs: 0, log, inFlightLimitMs: 300 });
    await expect(hanging).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(lines.map((l) => l.msg)).toEqual(['listener closed', 'in-flight requests cut at the time limit']);
    expect(lines[1]).toMatchObject({ cut: 1 });
  });
});
