import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { v3 } from '../support/http.ts';
import { openStream, type SseStream } from '../support/sse.ts';

// What open subscription streams hold (docs/partner-guide.md "Live booking status", docs/operator-guide.md
// "Configuration"): no pool connection and no transaction while idle, a bound per process
// (SUBSCRIPTIONS_MAX, then 503 too_many_subscriptions), and a LISTEN connection that comes back
// after it is lost, catching up on what was recorded meanwhile.

const app = useApp({ SUBSCRIPTIONS_MAX: '3', DB_POOL_MAX: '2' });
let w: BookingWorld;

const STATUS = 'subscription { bookingStatusChanged { eventId type booking { id status } } }';

beforeAll(async () => {
  w = await createBookingWorld(app);
});

const opened: SseStream[] = [];
async function subscribe(): Promise<SseStream> {
  const stream = await openStream(app.baseUrl, w.reseller.key, STATUS);
  opened.push(stream);
  return stream;
}
afterAll(() => opened.forEach((s) => s.close()));

async function subscriptionGauges(): Promise<{ open: number; max: number }> {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  return { open: gauge('graphql_subscriptions_open'), max: gauge('graphql_subscriptions_max') };
}

let booked = 0;
async function classBooking(): Promise<string> {
  booked += 1;
  const client = await anotherClient(app, w, `streams${booked}@example.com`);
  const instance = await instanceIn(app, w.gym.classId, 24 + booked);
  const res = await book.cls(app, w, { class_instance_id: instance.id, client_id: client.id });
  expect(res.status, res.text).toBe(201);
  return res.body.booking_id;
}

describe('open streams', () => {
  it('hold no pool connection and no transaction while idle; past SUBSCRIPTIONS_MAX one more is 503 too_many_subscriptions', async () => {
    const streams = [await subscribe(), await subscribe(), await subscribe()];
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    // More streams than the pool has connections, and requests are still answered at once.
    expect((await v3(app, '/passes', { key: w.reseller.key })).status).toBe(200);
    const inTransaction = await app.sql(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(inTransaction[0]!.n).toBe(0);
    // An operator sees how near the bound the process is (docs/operator-guide.md "Metrics").
    expect(await subscriptionGauges()).toEqual({ open: 3, max: 3 });

    const refused = await subscribe();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect((await subscriptionGauges()).open).toBe(3);
    expect(JSON.parse(refused.text!).errors[0].extensions).toMatchObject({ code: 'too_many_subscriptions', type: 'api_error' });

    // A stream closed gives its place back.
    streams[0]!.close();
    await streams[0]!.ended;
    await expect.poll(async () => (await subscriptionGauges()).open).toBe(2);
    let again: SseStream | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      again?.close();
      again = await subscribe();
      if (again.status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(again!.status).toBe(200);
    const id = await classBooking();
    for (const stream of [streams[1]!, streams[2]!, again!])
      expect((await stream.next()).json.data.bookingStatusChanged.booking.id).toBe(id);
  });
});

describe('the LISTEN connection', () => {
  it('lost, it is made again and the events recorded meanwhile are delivered', async () => {
    opened.splice(0).forEach((s) => s.close());
    await new Promise((r) => setTimeout(r, 100));
    const stream = await subscribe();
    expect(stream.status).toBe(200);
    const [{ n }] = await app.sql<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'event listener'`,
    );
    expect(n).toBe(1);
    // Recorded while no connection listens: its NOTIFY reaches nobody; the reconnect's read finds it.
    const id = await classBooking();
    const message = await stream.next(10_000);
    expect(message.json.data.bookingStatusChanged).toMatchObject({ type: 'booking.created', booking: { id, status: 'PENDING' } });
    const [{ listening }] = await app.sql<{ listening: number }>(
      `select count(*)::int as listening from pg_stat_activity where datname = current_database() and application_name = 'event listener'`,
    );
    expect(listening).toBe(1);
  });
});
