// Subscriptions benchmark (bench/README.md "Subscriptions"): N open GraphQL subscriptions over SSE
// (`bookingStatusChanged`, docs/partner-guide.md "Live booking status") on one `serve` process,
// while bookings are made over the reseller API and confirmed over the provider API of that same
// process, one at a time. For each confirm, the time from its answer (sent after its COMMIT) to the
// `booking.confirmed` message at each subscriber: p50, p99 and max over every subscriber and
// confirm. Prints a markdown table; writes nothing into the repository.
//
//   node bench/subscriptions.ts [--subscriptions 1000 --bookings 50 --pause 100]
//
// With DATABASE_URL it creates (and drops) a database `bench_subscriptions_<random>` on that server;
// without, it starts an embedded PostgreSQL under the system temp folder and removes it afterwards.
import pg from 'pg';
import { openOrm } from '../src/db/orm.ts';
import { createProviderKey } from '../src/modules/providers/index.ts';
import { startOurServer, sleep } from './request-path/processes.ts';
import { onCleanup, runBench } from './lifecycle.ts';
import { inParallel, openBookingsWorld } from './bookings/seed.ts';
import { openStream, type SseStream } from '../test/support/sse.ts';
import { flag } from './flags.ts';

const SUBSCRIPTIONS = flag('--subscriptions', 1000);
const BOOKINGS = flag('--bookings', 50);
const PAUSE_MS = flag('--pause', 100);

const startedAt = Date.now();
const progress = (message: string) =>
  process.stderr.write(`[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(3)} s] ${message}\n`);

const STATUS = 'subscription { bookingStatusChanged { eventId type booking { id status } } }';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function main(): Promise<void> {
  const { db, seed } = await openBookingsWorld('subscriptions', progress);
  progress('starting our server …');
  const ours = await startOurServer('ours', db.url, { SUBSCRIPTIONS_MAX: String(SUBSCRIPTIONS + 10) });
  const base = `http://127.0.0.1:${ours.port}`;
  const api = (path: string, key: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  progress(`issuing ${BOOKINGS} clients and making provider keys …`);
  const clients: string[] = new Array(BOOKINGS);
  await inParallel(BOOKINGS, 8, async (i) => {
    const res = await api('/v3/api/business/reseller/issued_passes', seed.apiKey, {
      pass_id: seed.passId,
      first_name: 'Live',
      last_name: `Client ${i}`,
      email: `live+${i}@example.com`,
    });
    if (res.status !== 201) throw new Error(`issuing a pass answered ${res.status} ${await res.text()}`);
    clients[i] = ((await res.json()) as { client_id: string }).client_id;
  });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const { rows } = await client.query<{ id: string; provider_id: string }>(
    'select ci.id, c.provider_id from class_instance ci join class c on c.id = ci.class_id where ci.id = any($1)',
    [seed.instances.slice(0, BOOKINGS)],
  );
  await client.end();
  const providerOf = new Map(rows.map((r) => [r.id, r.provider_id]));
  const orm = await openOrm(db.url, 2);
  const keys = new Map<string, string>();
  for (const providerId of new Set(providerOf.values()))
    keys.set(providerId, (await createProviderKey(orm.em.fork(), providerId, new Date())).secret);
  await orm.close();

  progress(`opening ${SUBSCRIPTIONS} subscriptions …`);
  const streams: SseStream[] = new Array(SUBSCRIPTIONS);
  await inParallel(SUBSCRIPTIONS, 50, async (i) => {
    streams[i] = await openStream(base, seed.apiKey, STATUS);
    if (streams[i]!.status !== 200) throw new Error(`subscription ${i} answered ${streams[i]!.status} ${streams[i]!.text}`);
  });
  onCleanup(async () => streams.forEach((s) => s?.close()));

  progress(`${BOOKINGS} bookings, each confirmed provider-side while ${SUBSCRIPTIONS} subscriptions are open …`);
  const latencies: number[] = [];
  let missing = 0;
  const arrivalOf = (stream: SseStream, bookingId: string) =>
    stream.messages.find((m) => {
      const e = m.json?.data?.bookingStatusChanged;
      return e?.type === 'booking.confirmed' && e.booking.id === bookingId;
    })?.at;
  for (let k = 0; k < BOOKINGS; k++) {
    const instance = seed.instances[k]!;
    const booked = await api('/v3/api/business/reseller/bookings/class', seed.apiKey, {
      class_instance_id: instance,
      client_id: clients[k],
    });
    if (booked.status !== 201) throw new Error(`booking answered ${booked.status} ${await booked.text()}`);
    const bookingId = ((await booked.json()) as { booking_id: string }).booking_id;
    const confirmed = await api(`/v3/api/provider/bookings/${bookingId}/confirm`, keys.get(providerOf.get(instance)!)!);
    if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status} ${await confirmed.text()}`);
    const committed = performance.now();
    const deadline = committed + 10_000;
    let arrivals: (number | undefined)[] = [];
    while (performance.now() < deadline) {
      arrivals = streams.map((s) => arrivalOf(s, bookingId));
      if (arrivals.every((a) => a !== undefined)) break;
      await sleep(5);
    }
    for (const at of arrivals) {
      if (at === undefined) missing++;
      else latencies.push(Math.max(0, at - committed));
    }
    for (const s of streams) s.messages.length = 0;
    await sleep(PAUSE_MS);
  }
  latencies.sort((a, b) => a - b);
  const ms = (v: number) => v.toFixed(1);
  console.log(`\n## Subscriptions: COMMIT → event at the subscriber\n`);
  console.log('| open subscriptions | confirms | samples | missing | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(
    `| ${SUBSCRIPTIONS} | ${BOOKINGS} | ${latencies.length} | ${missing} | ${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 99))} | ${ms(latencies.at(-1) ?? NaN)} |`,
  );
}

runBench(main, progress);
