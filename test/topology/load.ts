import { randomUUID } from 'node:crypto';
import { SPAS, spaSlot, type BookingsSeed } from '../../bench/bookings/seed.ts';
import { V3 } from '../../bench/bookings/requests.ts';

// The topology's mixed load (bench/soak.ts's mix, on bench/bookings/seed.ts's world): reads and
// writes through HAProxy, each write with an Idempotency-Key, as a partner following
// docs/partner-guide.md "Idempotency" sends them. A 503 (or 409 idempotency_request_in_progress)
// is retried with the same key; any other outcome that is not the expected answer is a failure,
// and so is every connection error, retried or not (the retry keeps the write count exact).

export interface World {
  seed: BookingsSeed;
  creditPackageId: string;
}

interface Request {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  expect: number;
  graphql?: boolean;
  /** What a successful answer wrote, by kind (the test counts rows against these). */
  acknowledge?: (body: any) => void;
}

export interface Tally {
  sent: number;
  /** Requests whose first answer was a 503 or 409 in progress and whose retry with the same key succeeded. */
  retriedThenOk: number;
  failures: string[];
  /** Ids the service acknowledged, per kind of write. */
  written: { bookings: Set<string>; cancelled: Set<string>; creditPurchases: Set<string>; issuedPasses: Set<string> };
}

export const newTally = (): Tally => ({
  sent: 0,
  retriedThenOk: 0,
  failures: [],
  written: { bookings: new Set(), cancelled: new Set(), creditPurchases: new Set(), issuedPasses: new Set() },
});

const counters: Record<string, number> = {};
const next = (kind: string) => (counters[kind] = (counters[kind] ?? 0) + 1);

/** The k-th request of a kind names the k-th client (clients: a count coprime with the seed's 1,000 class instances). */
function mix(w: World, t: Tally, booked: string[]): [number, () => Request | undefined][] {
  const client = (k: number) => w.seed.clients[k % w.seed.clients.length]!;
  const gql = (name: string, query: string, variables: object = {}): Request => ({
    name,
    method: 'POST',
    path: '/graphql',
    body: { query, variables },
    expect: 200,
    graphql: true,
  });
  const booking = (body: any) => t.written.bookings.add(body.booking_id);
  // Class bookings are the ones cancelled (as in bench/soak.ts).
  const classBooking = (body: any) => {
    booking(body);
    if (booked.length < 1000) booked.push(body.booking_id);
  };
  return [
    [14, () => ({ name: 'GET /passes', method: 'GET', path: `${V3}/passes?limit=10`, expect: 200 })],
    [14, () => ({ name: 'GET /clients/{id}', method: 'GET', path: `${V3}/clients/${client(next('c')).id}`, expect: 200 })],
    [10, () => ({ name: 'GET /credits', method: 'GET', path: `${V3}/clients/${client(next('cc')).id}/credits`, expect: 200 })],
    [6, () => ({ name: 'GET /providers', method: 'GET', path: `${V3}/providers?lat=52.52&lon=13.405&limit=10`, expect: 200 })],
    [10, () => gql('GraphQL passes', '{ passes(first: 10) { edges { node { id name price } } } }')],
    [
      10,
      () => {
        const k = next('class');
        return {
          name: 'POST /bookings/class',
          method: 'POST',
          path: `${V3}/bookings/class`,
          body: { class_instance_id: w.seed.instances[k % w.seed.instances.length], client_id: client(k).id },
          expect: 201,
          acknowledge: classBooking,
        };
      },
    ],
    [
      7,
      () => {
        const k = next('spa');
        const spa = w.seed.spas[k % SPAS]!;
        return {
          name: 'POST /bookings/spa',
          method: 'POST',
          path: `${V3}/bookings/spa`,
          body: { spa_id: spa.id, service_ids: [spa.serviceId], ...spaSlot(w.seed, k), client_id: client(k).id },
          expect: 201,
          acknowledge: booking,
        };
      },
    ],
    [
      4,
      () => {
        const id = booked.shift();
        if (id === undefined) return undefined;
        return {
          name: 'POST /bookings/{id}/cancel',
          method: 'POST',
          path: `${V3}/bookings/${id}/cancel`,
          body: {},
          expect: 200,
          acknowledge: () => t.written.cancelled.add(id),
        };
      },
    ],
    [
      4,
      () => ({
        name: 'POST /credit_purchases',
        method: 'POST',
        path: `${V3}/credit_purchases`,
        body: { client_id: client(next('cp')).id, credit_package_id: w.creditPackageId },
        expect: 201,
        acknowledge: (body) => t.written.creditPurchases.add(body.id),
      }),
    ],
    [
      5,
      () => {
        const k = next('issue');
        return {
          name: 'POST /issued_passes',
          method: 'POST',
          path: `${V3}/issued_passes`,
          body: { pass_id: w.seed.passId, first_name: 'Topology', last_name: `Client ${k}`, email: `topology+${k}@example.com` },
          expect: 201,
          acknowledge: (body) => t.written.issuedPasses.add(body.id),
        };
      },
    ],
  ];
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends one request until it has its final answer; records what the client saw. */
async function send(base: string, apiKey: string, request: Request, t: Tally): Promise<void> {
  const headers: Record<string, string> = { Authorization: `Bearer ${apiKey}` };
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  const idempotent = request.method === 'POST' && !request.graphql;
  if (idempotent) headers['Idempotency-Key'] = randomUUID();
  t.sent++;
  let retried = false;
  for (let attempt = 1; ; attempt++) {
    let status: number;
    let body: any;
    try {
      const res = await fetch(`${base}${request.path}`, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
      });
      status = res.status;
      const text = await res.text();
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text.slice(0, 200);
      }
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      t.failures.push(`${request.name}: connection error (${cause?.code ?? cause?.message ?? (err as Error).message})`);
      // Retried as the partner guide says, so that the write is counted once either way.
      if (idempotent && attempt < 5) continue;
      return;
    }
    const errors = request.graphql ? body?.errors : undefined;
    if (status === request.expect && !errors?.length) {
      request.acknowledge?.(body);
      if (retried) t.retriedThenOk++;
      return;
    }
    const code = body?.error?.code ?? errors?.[0]?.extensions?.code ?? '';
    const retryable = status === 503 || (status === 409 && code === 'idempotency_request_in_progress');
    if (idempotent && retryable && attempt < 20) {
      retried = true;
      await pause(200);
      continue;
    }
    t.failures.push(`${request.name}: ${status} ${code}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
    if (idempotent && status >= 500 && attempt < 5) continue;
    return;
  }
}

/** `connections` loops sending the mix to `base` until `stop()` returns true. */
export async function runLoad(base: string, w: World, connections: number, t: Tally, stop: () => boolean): Promise<void> {
  const booked: string[] = [];
  const kinds = mix(w, t, booked);
  const total = kinds.reduce((n, [weight]) => n + weight, 0);
  const pick = () => {
    let r = Math.random() * total;
    for (const [weight, make] of kinds) if ((r -= weight) < 0) return make;
    return kinds[0]![1];
  };
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!stop()) {
        const request = pick()();
        if (request) await send(base, w.seed.apiKey, request, t);
      }
    }),
  );
}
