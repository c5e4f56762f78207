import { describe, expect, it } from 'vitest';
import { deliverDueWebhooks } from '../../src/modules/webhooks/index.ts';
import { startBackgroundJobs } from '../../src/platform/background.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { webhookMetrics, type WebhookFailure, type WebhookOutcome } from '../../src/platform/metrics.ts';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { createEndpoint, fanOut, makeEvent, passFor, Receiver } from '../support/webhooks.ts';
import { samples } from '../support/metrics.ts';

// The background jobs' metrics in one process (`serve` without --workers; docs/operator-guide.md
// "Metrics"): each webhook attempt counted by what it came to, and the outbox backlog read at scrape.

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '300' });
const log = createLogger({ LOG_LEVEL: 'silent' });

describe('background jobs metrics', () => {
  it('each webhook attempt is counted by outcome and reason: delivered, an error status, no answer in time, nobody listening', async () => {
    const ok = await Receiver.start({ status: 200 });
    const unavailable = await Receiver.start({ status: 503 });
    const hanging = await Receiver.start({ hang: true });
    const gone = await Receiver.start();
    await gone.down();
    try {
      const reseller = await createReseller(app);
      const pass = await passFor(app, reseller);
      for (const r of [ok, unavailable, hanging, gone]) await createEndpoint(app, reseller, { url: r.url() });
      await makeEvent(app, reseller, pass);
      await fanOut(app);

      const recorded: [WebhookOutcome, WebhookFailure | undefined, number][] = [];
      const sink = webhookMetrics();
      const before = (await call(app, '/metrics')).text;
      const attempts = await deliverDueWebhooks(app.orm, {
        clock: app.clock,
        config: app.config,
        log,
        metrics: {
          attempted(outcome, reason, seconds) {
            recorded.push([outcome, reason, seconds]);
            sink.attempted(outcome, reason, seconds);
          },
        },
      });
      expect(attempts).toBe(4);
      expect(recorded.map(([o, r]) => `${o} ${r}`).sort()).toEqual([
        'delivered undefined',
        'failed network',
        'failed status',
        'failed timeout',
      ]);
      const timedOut = recorded.find(([, r]) => r === 'timeout')!;
      expect(timedOut[2]).toBeGreaterThanOrEqual(0.29); // WEBHOOK_TIMEOUT_MS

      // The process's sink, in this process's /metrics.
      const after = (await call(app, '/metrics')).text;
      const grew = (name: string, labels: string) => (samples(after, name).get(labels) ?? 0) - (samples(before, name).get(labels) ?? 0);
      expect(grew('webhook_attempts_total', 'outcome="delivered"')).toBe(1);
      expect(grew('webhook_attempts_total', 'outcome="failed"')).toBe(3);
      for (const reason of ['status', 'timeout', 'network']) expect(grew('webhook_failures_total', `reason="${reason}"`), reason).toBe(1);
      expect(grew('webhook_attempt_duration_seconds_count', 'outcome="failed"')).toBe(3);
      expect(grew('webhook_attempt_duration_seconds_bucket', 'le="0.25",outcome="failed"')).toBe(2); // the timeout's 300 ms is past 0.25
    } finally {
      for (const r of [ok, unavailable, hanging]) await r.down();
    }
  });

  it('a process running the background jobs reports the outbox backlog in its own /metrics', async () => {
    const [row] = await app.sql<{ id: string }>(
      `insert into outbox (topic, payload, created_at, available_at) values ('metrics-test', '{}'::jsonb, now() - interval '120 seconds', now())
       returning id`,
    );
    const jobs = startBackgroundJobs(app.orm, { config: app.config, clock: app.clock, log });
    try {
      const text = (await call(app, '/metrics')).text;
      expect(text).toContain('# TYPE outbox_pending_rows gauge\n');
      expect(samples(text, 'outbox_pending_rows').get('')).toBeGreaterThanOrEqual(1);
      expect(samples(text, 'outbox_oldest_pending_age_seconds').get('')).toBeGreaterThanOrEqual(120);
      await app.sql('delete from outbox where id = ?', [row.id]);
      expect(samples((await call(app, '/metrics')).text, 'outbox_oldest_pending_age_seconds').get('')).toBeLessThan(120);
    } finally {
      await jobs.stop();
      await app.sql('delete from outbox where id = ?', [row.id]);
    }
  });
});
