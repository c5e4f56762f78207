import { afterEach, describe, expect, it } from 'vitest';
import { webhookDeliveryLoop } from '../../src/modules/webhooks/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { createEndpoint, Receiver, settlePendingDeliveries } from '../support/webhooks.ts';
import { until } from '../support/until.ts';

// One endpoint's backlog (docs/partner-guide.md "Webhooks"): at most 4 attempts under way, and an
// attempt that ends frees its slot for the next at once, so a backlog drains as fast as the
// receiver answers, not one batch per run of the loop (every 250 ms).

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const log = createLogger({ LOG_LEVEL: 'silent' });
const BACKLOG = 40;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await settlePendingDeliveries(app);
});

describe('a backlog on one endpoint', () => {
  it('goes out as its receiver answers, never more than 4 at once, from a single run of the loop', async () => {
    const receiver = await Receiver.start({ status: 200, delayMs: 20 });
    cleanups.push(() => receiver.down());
    let open = 0;
    let mostOpen = 0;
    receiver.behaviour = {
      status: () => {
        open++;
        mostOpen = Math.max(mostOpen, open);
        setTimeout(() => open--, 20);
        return 200;
      },
      delayMs: 20,
    };
    const reseller = await createReseller(app);
    const endpoint = await createEndpoint(app, reseller, { url: receiver.url('/backlog') });
    await app.sql(
      `insert into event (id, reseller_id, type, payload, created_at)
       select 'evt_backlog_' || g, ?, 'issued_pass.created', json_build_object('id', 'evt_backlog_' || g), now() - interval '1 hour'
         from generate_series(1, ?) g`,
      [reseller.id, BACKLOG],
    );
    await app.sql(
      `insert into webhook_delivery (id, reseller_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       select 'whd_backlog_' || g, ?, ?, 'evt_backlog_' || g, 'issued_pass.created', 'PENDING', 0,
              now() - interval '1 hour' + g * interval '1 ms', now(), now()
         from generate_series(1, ?) g`,
      [reseller.id, endpoint.id, BACKLOG],
    );

    const loop = webhookDeliveryLoop({ clock: app.clock, config: app.config, log });
    cleanups.push(() => loop.stop());
    expect(await loop.run(app.orm)).toBe(4);
    // No second run: the attempts that end claim the rest.
    await until(() => receiver.receipts.length >= BACKLOG, `all ${BACKLOG} delivered after one run`, 20_000);
    await loop.stop();

    const ids = receiver.receipts.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(BACKLOG);
    expect(ids).toHaveLength(BACKLOG);
    expect(mostOpen).toBeLessThanOrEqual(4);
    const [row] = await app.sql<{ succeeded: number }>(
      `select count(*)::int as succeeded from webhook_delivery where endpoint_id = ? and status = 'SUCCEEDED'`,
      [endpoint.id],
    );
    expect(row).toEqual({ succeeded: BACKLOG });
  });
});
