import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import autocannon, { type Result } from 'autocannon';
import type { Target } from '../request-path/processes.ts';
import type { BookingsSeed } from './seed.ts';
import { confirmation, loadClass, loadSession, loadSpa, V3, type Kind, type Sent } from './requests.ts';

// Load for the bookings bench: autocannon in the bench process against a server process, each
// request built just before it is sent (`requests[].setupRequest`), so every one names new data
// (requests.ts) and carries its own Idempotency-Key. Co-pay sessions for the confirm load are
// opened beforehand through our API (openSessions) and each confirmed once.

// The part of autocannon's API beyond bench/autocannon.d.ts that this bench uses.
declare module 'autocannon' {
  interface RequestOptions {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    [option: string]: unknown;
  }
  interface Options {
    /** Stop after this many requests instead of after `duration`. */
    amount?: number;
    requests?: {
      method?: string;
      setupRequest?: (request: RequestOptions) => RequestOptions;
      onResponse?: (status: number, body: string) => void;
    }[];
  }
}

/** Co-pay sessions opened for the confirm load, each handed out once. */
export class SessionPool {
  private readonly ids: string[] = [];
  private next = 0;
  /** Confirms that found no session left (they go out with an unknown id and are counted as failed). */
  ranOut = 0;
  add(id: string): void {
    this.ids.push(id);
  }
  take(): string | undefined {
    return this.next < this.ids.length ? this.ids[this.next++] : undefined;
  }
  get available(): number {
    return this.ids.length - this.next;
  }
  get opened(): number {
    return this.ids.length;
  }
}

/** Per kind, the next k: shared by both targets, so no data is named twice in a run. */
export class Counters {
  class = 0;
  spa = 0;
  session = 0;
}

/** `ours`: our server on the tuned engine; `plain`: on DB_ENGINE=plain (src/db/engine/README.md); `bare`: the hand-written handler. */
export interface Load {
  name: string;
  kind: Kind;
  side: 'ours' | 'plain' | 'bare';
  target: () => Target;
}

const run = randomBytes(4).toString('hex');
let keys = 0;

/** The next request of a load. */
function nextRequest(load: Load, seed: BookingsSeed, counters: Counters, sessions: SessionPool): Sent {
  if (load.kind === 'class') return loadClass(seed, counters.class++);
  if (load.kind === 'spa') return loadSpa(seed, counters.spa++);
  const id = sessions.take();
  if (id === undefined) sessions.ranOut++;
  return confirmation(id ?? 'sess_00000000000000000000000000');
}

/** The next request of a load as sent: its path, body and headers (the key, and a new Idempotency-Key when the load sends them). */
function outgoing(load: Load, seed: BookingsSeed, counters: Counters, sessions: SessionPool, idempotencyKey: boolean) {
  const sent = nextRequest(load, seed, counters, sessions);
  const headers: Record<string, string> = { Authorization: `Bearer ${seed.apiKey}` };
  if (sent.body !== undefined) headers['Content-Type'] = 'application/json';
  if (idempotencyKey) headers['Idempotency-Key'] = `bench-${run}-${++keys}`;
  return { path: sent.path, headers, body: sent.body ?? '' };
}

export function fire(
  load: Load,
  seed: BookingsSeed,
  counters: Counters,
  sessions: SessionPool,
  opts: { seconds: number; connections: number; idempotencyKey: boolean },
): Promise<Result> {
  return autocannon({
    url: `http://127.0.0.1:${load.target().port}`,
    connections: opts.connections,
    duration: opts.seconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({ ...request, method: 'POST', ...outgoing(load, seed, counters, sessions, opts.idempotencyKey) }),
      },
    ],
  });
}

export interface Paced {
  latencies: number[];
  failed: number;
  /** What the failed ones were: `<status> <error code>` from the answer, or the request's error code; and how many of each. */
  failures: Map<string, number>;
  /** The longest this process's event loop was held up meanwhile (ms): a request due then went out late, and counts it. */
  generatorStallMs: number;
}

/**
 * An open loop: `rate` requests a second, evenly spaced, for `seconds`, over at most `connections`
 * keep-alive connections. A request waits for a free connection when all are busy, and its latency
 * runs from the moment it was due, so a slow answer also counts in the requests queued behind it.
 * (autocannon's own rate limit sends each connection's share for the second at once, in a burst.)
 */
export async function firePaced(
  load: Load,
  seed: BookingsSeed,
  counters: Counters,
  sessions: SessionPool,
  opts: { rate: number; seconds: number; connections: number; idempotencyKey: boolean },
): Promise<Paced> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const { port } = load.target();
  const latencies: number[] = [];
  let failed = 0;
  const failures = new Map<string, number>();
  const fail = (what: string) => {
    failed++;
    failures.set(what, (failures.get(what) ?? 0) + 1);
  };
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const { path, headers, body } = outgoing(load, seed, counters, sessions, opts.idempotencyKey);
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
          agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          // Only a failure's answer is kept: its status and error code say what went wrong.
          if (res.statusCode === 201) res.resume();
          else res.on('data', (c: Buffer) => chunks.push(c));
          res.once('end', () => {
            latencies.push(performance.now() - due);
            if (res.statusCode !== 201) fail(`${res.statusCode} ${errorCodeOf(Buffer.concat(chunks).toString())}`);
            resolve();
          });
        },
      );
      req.once('error', (err: NodeJS.ErrnoException) => {
        fail(err.code ?? err.message);
        resolve();
      });
      req.end(body);
    });
  const stalls = monitorEventLoopDelay({ resolution: 5 });
  stalls.enable();
  const total = Math.round(opts.rate * opts.seconds);
  const interval = 1000 / opts.rate;
  const start = performance.now();
  const sent: Promise<void>[] = [];
  while (sent.length < total) {
    const now = performance.now();
    while (sent.length < total && start + sent.length * interval <= now) sent.push(send(start + sent.length * interval));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(sent);
  stalls.disable();
  agent.destroy();
  return { latencies, failed, failures, generatorStallMs: stalls.max / 1e6 };
}

/** Opens `count` co-pay sessions through our API (POST /bookings/spa at uncovered spas), `connections` at a time. */
export async function openSessions(
  ours: Target,
  seed: BookingsSeed,
  counters: Counters,
  sessions: SessionPool,
  count: number,
  connections: number,
): Promise<{ failed: number; seconds: number }> {
  const started = Date.now();
  let failed = 0;
  await autocannon({
    url: `http://127.0.0.1:${ours.port}`,
    connections,
    amount: Math.max(count, connections),
    timeout: 10, // autocannon refuses fewer requests than connections
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const sent = loadSession(seed, counters.session++);
          return {
            ...request,
            method: 'POST',
            path: sent.path,
            body: sent.body,
            headers: { Authorization: `Bearer ${seed.apiKey}`, 'Content-Type': 'application/json' },
          };
        },
        onResponse: (status, body) => {
          const id = status === 201 ? (JSON.parse(body) as { session_id?: string }).session_id : undefined;
          if (id) sessions.add(id);
          else failed++;
        },
      },
    ],
  });
  return { failed, seconds: (Date.now() - started) / 1000 };
}

export const loadPath = (kind: Kind) =>
  kind === 'class' ? `${V3}/bookings/class` : kind === 'spa' ? `${V3}/bookings/spa` : `${V3}/bookings/spa/{session_id}/confirm`;

/** The catalogue code of an error answer (`{ "error": { "code" } }`), or what the body starts with. */
function errorCodeOf(body: string): string {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    if (typeof code === 'string') return code;
  } catch {
    /* not JSON */
  }
  return JSON.stringify(body.slice(0, 60));
}

/** `n (k × what, …)` for a paced load's failures; empty when there were none. */
export function failuresOf(paced: Pick<Paced, 'failed' | 'failures'>): string {
  if (paced.failed === 0) return '0';
  return `${paced.failed} (${[...paced.failures].map(([what, n]) => `${n} × ${what}`).join(', ')})`;
}
