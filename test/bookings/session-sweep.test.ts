import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireBookingSessions } from '../../src/modules/bookings/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { expectError } from '../support/assertions.ts';
import { book, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { lastOutboxId, outboxSince } from '../support/db-state.ts';
import { v3 } from '../support/http.ts';
import { killStartedProcesses, runCli, Service } from '../ops/processes.ts';

// Sessions past their 24 hours are marked EXPIRED by the background sweep (docs/partner-guide.md "Bookings"),
// each with a booking_session.expired event; a confirm refuses them either way.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});
afterAll(async () => {
  await killStartedProcesses();
});

const log = createLogger({ LOG_LEVEL: 'silent' });
const openSession = async (time: string) =>
  (await book.spa(app, w, { date: '2026-03-10', time, spa_id: w.copaySpa.id, service_ids: [w.copaySpa.sauna], client_id: w.client.id }))
    .body.session_id as string;
const statusOf = async (id: string) =>
  (await app.sql<{ status: string }>('select status from booking_session where id = ?', [id]))[0].status;

describe('expireBookingSessions', () => {
  it('expires only sessions past 24 hours, once, with their event; the confirm then answers 422', async () => {
    const old = await openSession('10:00');
    app.clock.set(new Date('2026-03-02T20:00:00Z'));
    const young = await openSession('11:00');
    app.clock.set(new Date('2026-03-03T08:00:00Z'));
    const outbox = await lastOutboxId(app);

    expect(await expireBookingSessions(app.orm.em, { clock: app.clock, config: app.config, log })).toBe(1);
    expect(await statusOf(old)).toBe('EXPIRED');
    expect(await statusOf(young)).toBe('OPEN');
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([['booking_session.expired', w.reseller.id]]);
    expect(events[0].payload.data.object).toMatchObject({ object: 'booking_session', id: old, status: 'EXPIRED', kind: 'SPA_COPAY' });

    expect(await expireBookingSessions(app.orm.em, { clock: app.clock, config: app.config, log })).toBe(0);
    expectError(await v3(app, `/bookings/spa/${old}/confirm`, { key: w.reseller.key, method: 'POST' }), 422, 'session_expired');
  });
});

describe('worker', () => {
  it('runs the session sweep beside the outbox', async () => {
    // Opened 25 hours before the real now, so the worker's real clock finds it expired.
    app.clock.set(new Date(Date.now() - 25 * 3600_000));
    const fresh = await createBookingWorld(app);
    const date = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const res = await book.spa(app, fresh, {
      date,
      time: '10:00',
      spa_id: fresh.copaySpa.id,
      service_ids: [fresh.copaySpa.sauna],
      client_id: fresh.client.id,
    });
    expect(res.status, res.text).toBe(201);
    const worker = new Service(['worker'], { DATABASE_URL: app.databaseUrl, SESSION_SWEEP_MS: '50' });
    await worker.waitForStdout(/"msg":"worker started"/);
    const deadline = Date.now() + 20_000;
    while ((await statusOf(res.body.session_id)) !== 'EXPIRED') {
      if (Date.now() > deadline) throw new Error('the worker did not expire the session');
      await new Promise((r) => setTimeout(r, 50));
    }
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});

describe('sessions expire (CLI)', () => {
  it('expires the sessions past 24 hours once and prints how many', async () => {
    app.clock.set(new Date(Date.now() - 25 * 3600_000));
    const fresh = await createBookingWorld(app);
    const date = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const res = await book.spa(app, fresh, {
      date,
      time: '11:00',
      spa_id: fresh.copaySpa.id,
      service_ids: [fresh.copaySpa.sauna],
      client_id: fresh.client.id,
    });
    expect(res.status, res.text).toBe(201);
    const first = await runCli(['sessions', 'expire'], { DATABASE_URL: app.databaseUrl });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).expired).toBeGreaterThanOrEqual(1);
    expect(await statusOf(res.body.session_id)).toBe('EXPIRED');
    const second = await runCli(['sessions', 'expire'], { DATABASE_URL: app.databaseUrl });
    expect(JSON.parse(second.stdout)).toEqual({ expired: 0 });
  }, 60_000);
});
