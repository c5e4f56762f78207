import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { moduleSweeps, outboxHandlers } from '../../src/cli/serve.ts';
import { openOrm } from '../../src/db/orm.ts';
import { deliverDueWebhooks } from '../../src/modules/webhooks/index.ts';
import { startBackgroundJobs, type BackgroundJobs } from '../../src/platform/background.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import {
  createEndpoint,
  deliveriesOf,
  fanOut,
  makeEvent,
  passFor,
  Receiver,
  settlePendingDeliveries,
  verified,
} from '../support/webhooks.ts';
import { until as waitUntilHolds } from '../support/until.ts';

// Fair delivery (docs/partner-guide.md "Webhooks"): one reseller's endpoint that never answers, with a backlog of
// 10,000 due deliveries, does not delay another reseller's event: its first attempt goes out
// within 2 s, and the silent endpoint never has more than 4 attempts under way. The background
// jobs run as `serve` runs them, with the default poll interval and the 10 s timeout.

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const log = createLogger({ LOG_LEVEL: 'silent' });
const BACKLOG = 10_000;

/** A TCP server that accepts connections and never answers; counts how many are open at once. */
async function silentServer() {
  const sockets = new Set<net.Socket>();
  let mostOpen = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    mostOpen = Math.max(mostOpen, sockets.size);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/never`,
    open: () => sockets.size,
    mostOpen: () => mostOpen,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) => waitUntilHolds(check, what, timeoutMs);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await settlePendingDeliveries(app);
});

describe('fair delivery', () => {
  it("another reseller's 10,000-delivery backlog to a silent endpoint › a new event's first attempt arrives within 2 s, signed", async () => {
    const silent = await silentServer();
    cleanups.push(() => silent.close());
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.down());

    const noisy = await createReseller(app);
    const stuck = await createEndpoint(app, noisy, { url: silent.url });
    // The backlog, all due and older than anything to come: events and deliveries written directly.
    await app.sql(
      `insert into event (id, reseller_id, type, payload, created_at)
       select 'evt_backlog_' || g, ?, 'issued_pass.created', json_build_object('id', 'evt_backlog_' || g), now() - interval '1 hour'
         from generate_series(1, ?) g`,
      [noisy.id, BACKLOG],
    );
    await app.sql(
      `insert into webhook_delivery (id, reseller_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       select 'whd_backlog_' || g, ?, ?, 'evt_backlog_' || g, 'issued_pass.created', 'PENDING', 0,
              now() - interval '1 hour' + g * interval '1 ms', now(), now()
         from generate_series(1, ?) g`,
      [noisy.id, stuck.id, BACKLOG],
    );

    const calm = await createReseller(app);
    const pass = await passFor(app, calm);
    const endpoint = await createEndpoint(app, calm, { url: receiver.url('/calm') });

    // Two workers on the database, as two processes would run them.
    const second = await openOrm(app.databaseUrl, 4);
    const workers: BackgroundJobs[] = [app.orm, second].map((orm) =>
      startBackgroundJobs(orm, {
        config: app.config,
        clock: app.clock,
        log,
        handlers: outboxHandlers(app.config, log),
        sweeps: moduleSweeps(app.config, log),
      }),
    );
    // Cleaned up in order: the silent server closes first, so the attempts it holds end and stop() does not wait out their timeout.
    cleanups.push(async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await second.close();
    });
    await until(() => silent.open() === 4, 'the silent endpoint holds its 4 attempts');

    const before = Date.now();
    const { eventId } = await makeEvent(app, calm, pass);
    await until(() => receiver.of(eventId).length > 0, 'the event reached the calm endpoint', 10_000);
    const arrived = receiver.of(eventId)[0];
    // `before` precedes the event's commit, so this bounds the delay from above.
    expect(arrived.at - before).toBeLessThan(2000);
    expect(verified(endpoint.secret, arrived)).toMatchObject({ id: eventId, type: 'issued_pass.created' });

    // Both workers polled many times meanwhile: the silent endpoint still never had more than 4 under way.
    expect(silent.mostOpen()).toBe(4);
    const [counts] = await app.sql<{ attempted: number; leased: number }>(
      `select count(*) filter (where attempts > 0)::int as attempted, count(*) filter (where locked_until > now())::int as leased
         from webhook_delivery where endpoint_id = ?`,
      [stuck.id],
    );
    expect(counts).toEqual({ attempted: 4, leased: 4 });
  });

  it('due attempts are taken per endpoint in turn › a batch of 4 takes one from each of 4 endpoints, the newest event included', async () => {
    // A port nothing listens on: every attempt there is refused at once.
    const closed = await silentServer();
    await closed.close();
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.down());
    const noisy = await createReseller(app);
    const backlogged: string[] = [];
    for (let i = 0; i < 3; i++) backlogged.push((await createEndpoint(app, noisy, { url: `${closed.url}/${i}` })).id);
    await app.sql(
      `insert into event (id, reseller_id, type, payload, created_at)
       select 'evt_turns_' || g, ?, 'issued_pass.created', json_build_object('id', 'evt_turns_' || g), now() - interval '1 hour'
         from generate_series(1, 10) g`,
      [noisy.id],
    );
    await app.sql(
      `insert into webhook_delivery (id, reseller_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       select 'whd_turns_' || e.n || '_' || g, ?, e.id, 'evt_turns_' || g, 'issued_pass.created', 'PENDING', 0,
              now() - interval '1 hour' + g * interval '1 ms', now(), now()
         from generate_series(1, 10) g, jsonb_array_elements_text(?::jsonb) with ordinality e(id, n)`,
      [noisy.id, JSON.stringify(backlogged)],
    );

    const calm = await createReseller(app);
    const pass = await passFor(app, calm);
    const endpoint = await createEndpoint(app, calm, { url: receiver.url('/turns') });
    const { eventId } = await makeEvent(app, calm, pass);
    await fanOut(app);

    expect(await deliverDueWebhooks(app.orm, { clock: app.clock, config: app.config, log }, 4)).toBe(4);
    expect(receiver.of(eventId)).toHaveLength(1);
    expect(verified(endpoint.secret, receiver.of(eventId)[0])).toMatchObject({ id: eventId });
    for (const id of backlogged) {
      const attempted = (await deliveriesOf(app, id)).filter((d) => d.attempts > 0);
      expect(attempted, id).toEqual([expect.objectContaining({ event_id: 'evt_turns_1', status: 'PENDING', attempts: 1 })]);
    }
  });
});
