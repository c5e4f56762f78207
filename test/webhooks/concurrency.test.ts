import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';
import { deliverDueWebhooks, WEBHOOK_EVENT_TOPIC, webhookFanOut } from '../../src/modules/webhooks/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { dispatchOnce } from '../../src/platform/outbox.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { createEndpoint, deliveriesOf, makeEvent, passFor, Receiver, verified } from '../support/webhooks.ts';

// Two dispatchers on one database, each with its own connection pool, fanning out and delivering
// the same events at once: SKIP LOCKED on the outbox, the (endpoint, event) key and the delivery
// lease keep every event to one delivery per endpoint, sent by one of them. A receiver sees an event
// more than once only when an attempt really failed and was retried (docs/partner-guide.md "Webhooks").

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const log = createLogger({ LOG_LEVEL: 'silent' });

let second: MikroORM;
beforeAll(async () => {
  second = await openOrm(app.databaseUrl, 4);
});
afterAll(async () => {
  await second?.close();
});

describe('two dispatchers on one database', () => {
  it('every event reaches each subscribed endpoint; each attempt by one dispatcher only; repeats only from real retries', async () => {
    // Every fifth event fails its first attempt (a 500), so it is retried once.
    const flaky = new Set<string>();
    const firstSeen = new Set<string>();
    const receiver = await Receiver.start({
      delayMs: 15,
      status: (r) => {
        const key = `${r.path} ${r.headers['webhook-id']}`;
        const first = !firstSeen.has(key);
        firstSeen.add(key);
        return first && flaky.has(r.headers['webhook-id'] as string) ? 500 : 200;
      },
    });
    try {
      const reseller = await createReseller(app);
      const pass = await passFor(app, reseller);
      const all = await createEndpoint(app, reseller, { url: receiver.url('/all'), enabled_events: ['*'] });
      const created = await createEndpoint(app, reseller, { url: receiver.url('/created'), enabled_events: ['issued_pass.created'] });
      const events: string[] = [];
      for (let i = 0; i < 24; i++) {
        const { eventId } = await makeEvent(app, reseller, pass);
        events.push(eventId);
        if (i % 5 === 0) flaky.add(eventId);
      }

      const handlers = { [WEBHOOK_EVENT_TOPIC]: webhookFanOut({ clock: app.clock, config: app.config, log }) };
      const deps = { clock: app.clock, config: app.config, log };
      const pending = async () => {
        const [row] = await app.sql<{ n: string }>(
          `select (select count(*) from outbox where topic = 'event' and processed_at is null)
                + (select count(*) from webhook_delivery where status = 'PENDING' and reseller_id = ?) as n`,
          [reseller.id],
        );
        return Number(row.n);
      };
      const attemptsBy = [0, 0];
      const run = async (orm: MikroORM, me: number) => {
        for (let round = 0; round < 500 && (await pending()) > 0; round++) {
          await dispatchOnce(orm, handlers, app.clock, log, 3);
          const sent = await deliverDueWebhooks(orm, deps, 4);
          attemptsBy[me] += sent;
          if (sent === 0) await new Promise((r) => setTimeout(r, 5));
        }
      };
      // The retries are due 5 s later on the domain clock: move it on while both run.
      let running = true;
      const ticker = (async () => {
        while (running) {
          await new Promise((r) => setTimeout(r, 50));
          app.clock.advance(1_000);
        }
      })();
      await Promise.all([run(app.orm, 0), run(second, 1)]);
      running = false;
      await ticker;
      expect(await pending()).toBe(0);
      expect(attemptsBy[0], 'the first dispatcher delivered some').toBeGreaterThan(0);
      expect(attemptsBy[1], 'the second dispatcher delivered some').toBeGreaterThan(0);

      for (const [endpoint, path] of [
        [all, '/all'],
        [created, '/created'],
      ] as const) {
        const rows = await deliveriesOf(app, endpoint.id);
        expect(rows.map((r) => r.event_id).sort()).toEqual([...events].sort()); // one delivery per event, none missing
        for (const row of rows) {
          const receipts = receiver.receipts.filter((r) => r.path === path && r.headers['webhook-id'] === row.event_id);
          expect(row.status).toBe('SUCCEEDED');
          // A repeat only where an attempt failed: as many receipts as attempts, 2 for the flaky ones.
          expect(receipts.length, `${path} ${row.event_id}`).toBe(row.attempts);
          expect(row.attempts).toBe(flaky.has(row.event_id) ? 2 : 1);
          for (const r of receipts) verified(endpoint.secret, r);
        }
      }
      expect(attemptsBy[0] + attemptsBy[1]).toBe(2 * (events.length + flaky.size));
    } finally {
      await receiver.down();
    }
  }, 120_000);
});
