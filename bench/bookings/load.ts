import { randomBytes } from 'node:crypto';
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
  add(id: string): void { this.ids.push(id); }
  take(): string | undefined { return this.next < this.ids.length ? this.ids[this.next++] : undefined; }
  get available(): number { return this.ids.length - this.next; }
  get opened(): number { return this.ids.length; }
}

/** Per kind, the next k: shared by both targets, so no data is named twice in a run. */
export class Counters {
  class = 0;
  spa = 0;
  session = 0;
}

export interface Load { name: string; kind: Kind; side: 'ours' | 'bare'; target: () => Target }

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

export function fire(load: Load, seed: BookingsSeed, counters: Counters, sessions: SessionPool,
  opts: { seconds: number; connections: number; idempotencyKey: boolean }): Promise<Result> {
  return autocannon({
    url: `http://127.0.0.1:${load.target().port}`,
    connections: opts.connections, duration: opts.seconds, timeout: 10,
    requests: [{
      method: 'POST',
      setupRequest: (request) => {
        const sent = nextRequest(load, seed, counters, sessions);
        const headers: Record<string, string> = { Authorization: `Bearer ${seed.apiKey}` };
        if (sent.body !== undefined) headers['Content-Type'] = 'application/json';
        if (opts.idempotencyKey) headers['Idempotency-Key'] = `bench-${run}-${++keys}`;
        return { ...request, method: 'POST', path: sent.path, headers, body: sent.body ?? '' };
      },
    }],
  });
}

/** Opens `count` co-pay sessions through our API (POST /bookings/spa at uncovered spas), `connections` at a time. */
export async function openSessions(ours: Target, seed: BookingsSeed, counters: Counters, sessions: SessionPool, count: number,
  connections: number): Promise<{ failed: number; seconds: number }> {
  const started = Date.now();
  let failed = 0;
  await autocannon({
    url: `http://127.0.0.1:${ours.port}`,
    connections, amount: Math.max(count, connections), timeout: 10, // autocannon refuses fewer requests than connections
    requests: [{
      method: 'POST',
      setupRequest: (request) => {
        const sent = loadSession(seed, counters.session++);
        return {
          ...request, method: 'POST', path: sent.path, body: sent.body,
          headers: { Authorization: `Bearer ${seed.apiKey}`, 'Content-Type': 'application/json' },
        };
      },
      onResponse: (status, body) => {
        const id = status === 201 ? (JSON.parse(body) as { session_id?: string }).session_id : undefined;
        if (id) sessions.add(id);
        else failed++;
      },
    }],
  });
  return { failed, seconds: (Date.now() - started) / 1000 };
}

export const loadPath = (kind: Kind) => (kind === 'class' ? `${V3}/bookings/class` : kind === 'spa' ? `${V3}/bookings/spa` : `${V3}/bookings/spa/{session_id}/confirm`);
