import { describe, expect, it } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { dispatchOnce, enqueue, type OutboxRow } from '../../src/platform/outbox.ts';
import { useApp } from '../support/app.ts';

const log = createLogger({ LOG_LEVEL: 'silent' });
const app = useApp();

async function enqueueMany(topic: string, n: number) {
  await app.orm.em.fork().transactional(async (em) => {
    for (let i = 0; i < n; i++) await enqueue(em, { topic, payloadJson: JSON.stringify({ i }), at: app.clock.now() });
  });
}

describe('outbox dispatcher', () => {
  it('a topic without a handler › is left pending for the issue that adds its handler', async () => {
    await enqueueMany('later.topic', 2);
    const handled = await dispatchOnce(app.orm, { other: async () => undefined }, app.clock, log);
    expect(handled).toBe(0);
    const rows = await app.sql<{ n: string }>("select count(*) as n from outbox where topic = 'later.topic' and processed_at is null");
    expect(Number(rows[0].n)).toBe(2);
  });

  it('two dispatchers on separate connections › handle every row exactly once (SKIP LOCKED)', async () => {
    await enqueueMany('count.me', 40);
    const second = await openOrm(app.databaseUrl, 4);
    const seen: string[] = [];
    const handler = async (row: OutboxRow) => {
      seen.push(row.id);
      await new Promise((r) => setTimeout(r, 5)); // hold the claim while the other dispatcher runs
    };
    try {
      let total = 0;
      for (let round = 0; round < 10 && total < 40; round++) {
        const [a, b] = await Promise.all([
          dispatchOnce(app.orm, { 'count.me': handler }, app.clock, log, 7),
          dispatchOnce(second, { 'count.me': handler }, app.clock, log, 7),
        ]);
        total += a + b;
      }
      expect(total).toBe(40);
      expect(new Set(seen).size).toBe(40);
      expect(seen.length).toBe(40);
      const pending = await app.sql<{ n: string }>("select count(*) as n from outbox where topic = 'count.me' and processed_at is null");
      expect(Number(pending[0].n)).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('a failing handler › the row is kept with its error and retried after the back-off', async () => {
    await enqueueMany('flaky', 1);
    let calls = 0;
    const handlers = {
      flaky: async () => {
        calls++;
        if (calls === 1) throw new Error('receiver down');
      },
    };
    expect(await dispatchOnce(app.orm, handlers, app.clock, log)).toBe(1);
    const [failed] = await app.sql<{ attempts: number; last_error: string; processed_at: Date | null }>(
      "select attempts, last_error, processed_at from outbox where topic = 'flaky'",
    );
    expect(failed).toMatchObject({ attempts: 1, last_error: 'receiver down', processed_at: null });

    expect(await dispatchOnce(app.orm, handlers, app.clock, log)).toBe(0); // not yet: 5 s back-off
    app.clock.advance(6_000);
    expect(await dispatchOnce(app.orm, handlers, app.clock, log)).toBe(1);
    const [done] = await app.sql<{ attempts: number; processed_at: Date | null }>(
      "select attempts, processed_at from outbox where topic = 'flaky'",
    );
    expect(done.attempts).toBe(2);
    expect(done.processed_at).not.toBeNull();
    expect(calls).toBe(2);
  });
});
