import { beforeAll, describe, expect, it } from 'vitest';
import { expireHostedSessions } from '../../src/modules/hosted-sessions/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { SWEEP_BATCH } from '../../src/platform/sweep.ts';
import { useApp } from '../support/app.ts';
import { lastOutboxId, outboxSince } from '../support/db-state.ts';
import { expectError } from '../support/assertions.ts';
import { createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { createReseller } from '../support/factories.ts';
import { call, gql, v3 } from '../support/http.ts';
import { getPage, openSession, postFromPage } from '../support/hosted-sessions.ts';

// Reading a hosted session back (docs/partner-guide.md "Hosted sessions"): GET /hosted_sessions/{id} and GraphQL
// hostedSession(id:) show its status and, once the client is done, what they got; never the URL.

const NOW = new Date('2026-03-02T08:00:00Z');
const app = useApp({}, { now: NOW });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const read = (id: string, key = w.reseller.key) => v3(app, `/hosted_sessions/${id}`, { key });
const QUERY = `query($id: ID!) { hostedSession(id: $id) { id status mode bookingId accessCodeId completedAt client { id } } }`;

describe('GET /hosted_sessions/{id} and hostedSession(id:)', () => {
  it('OPEN without its URL, then COMPLETED with the booking the page made, on both surfaces', async () => {
    const session = await openSession(app, w, { client_id: w.client.id });
    const { url: _url, ...created } = session.body;
    const open = await read(session.id);
    expect(open.status, open.text).toBe(200);
    expect(open.body).toEqual(created);
    expect(open.text).not.toContain(session.secret);

    const instance = await instanceIn(app, w.gym.classId, 26);
    const booked = await postFromPage(app, session.secret, 'class', { class_instance_id: instance.id });
    expect(booked.status, booked.text.slice(0, 300)).toBe(303);
    const done = await read(session.id);
    expect(done.body).toMatchObject({
      status: 'COMPLETED',
      booking_id: expect.stringMatching(/^booking_/),
      access_code_id: null,
      completed_at: Math.floor(NOW.getTime() / 1000),
    });
    const bookings = await v3(app, `/clients/${w.client.id}/bookings`, { key: w.reseller.key });
    expect(bookings.body.data.map((b: { id: string }) => b.id)).toEqual([done.body.booking_id]);

    const g = await gql(app, w.reseller.key, QUERY, { id: session.id });
    expect(g.body).toEqual({
      data: {
        hostedSession: {
          id: session.id,
          status: 'COMPLETED',
          mode: 'BOOKING',
          bookingId: done.body.booking_id,
          accessCodeId: null,
          completedAt: '2026-03-02T08:00:00Z',
          client: { id: w.client.id },
        },
      },
    });
  });

  it('EXPIRED once past expires_at, before any sweep', async () => {
    const session = await openSession(app, w, { client_id: w.client.id, expires_in: 600 });
    app.clock.set(new Date(NOW.getTime() + 600_000));
    expect((await read(session.id)).body.status).toBe('EXPIRED');
    expect((await getPage(app, session.url)).status).toBe(410);
    expect((await gql(app, w.reseller.key, QUERY, { id: session.id })).body.data.hostedSession.status).toBe('EXPIRED');
  });

  it("another reseller's session or a malformed id › 404 on REST, null on GraphQL", async () => {
    const session = await openSession(app, w, { client_id: w.client.id });
    const other = await createReseller(app);
    expectError(await read(session.id, other.key), 404, 'resource_not_found');
    expectError(await read('hs_nope'), 404, 'resource_not_found');
    expect((await gql(app, other.key, QUERY, { id: session.id })).body).toEqual({ data: { hostedSession: null } });
  });
});

describe('the expiry sweep over more sessions than one batch', () => {
  it('expires all 450 in one call (batches of SWEEP_BATCH), each once with its event', async () => {
    const session = await openSession(app, w, { client_id: w.client.id, expires_in: 300 });
    // 449 more like it, written directly: the sweep's batches are what this test is about.
    await app.sql(
      `insert into hosted_session (id, reseller_id, client_id, mode, return_url, allow_copay, max_copay_amount, secret_hash, status, expires_at, completed_at, booking_id, access_code_id, created_at, updated_at)
       select id || '_' || n, reseller_id, client_id, mode, return_url, allow_copay, max_copay_amount, md5(n::text) || md5(id || n), status, expires_at, null, null, null, created_at, updated_at
         from hosted_session, generate_series(1, 449) n where id = ?`,
      [session.id],
    );
    app.clock.set(new Date(NOW.getTime() + 300_000));
    const log = createLogger({ LOG_LEVEL: 'silent' });
    const before = await lastOutboxId(app);
    expect(SWEEP_BATCH).toBeLessThan(450);
    expect(await expireHostedSessions(app.orm.em, { clock: app.clock, config: app.config, log })).toBe(450);
    const [{ open }] = await app.sql<{ open: string }>(
      `select count(*) as open from hosted_session where status = 'OPEN' and expires_at <= ?`,
      [app.clock.now()],
    );
    expect(Number(open)).toBe(0);
    const events = (await outboxSince(app, before)).filter((e) => e.payload.type === 'hosted_session.expired');
    expect(new Set(events.map((e) => e.payload.data.object.id)).size).toBe(450);
    expect(events).toHaveLength(450);
    expect(await expireHostedSessions(app.orm.em, { clock: app.clock, config: app.config, log })).toBe(0);
  });
});

describe('the page takes its form and query under the one text rule', () => {
  it('a NUL, invalid percent-encoding or invalid UTF-8 › a 400 page; nothing booked, the session stays OPEN', async () => {
    const session = await openSession(app, w, { client_id: w.client.id });
    const bookings = async () => (await v3(app, `/clients/${w.client.id}/bookings`, { key: w.reseller.key })).body.data;
    const before = await bookings();
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const answers = [
      await call(app, `/hosted/${session.secret}/class`, { raw: 'class_instance_id=ci%00', headers: form }),
      await call(app, `/hosted/${session.secret}/class`, { raw: 'class_instance_id=%E0%A4%A', headers: form }),
      await call(app, `/hosted/${session.secret}/class`, {
        raw: new Uint8Array([...Buffer.from('class_instance_id='), 0xff, 0xfe]),
        headers: form,
      }),
      await call(app, `/hosted/${session.secret}?service_id=svc%00&date=2026-03-03`),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400]);
    for (const a of answers) expect(a.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect((await read(session.id)).body.status).toBe('OPEN');
    expect(await bookings()).toEqual(before);
  });
});
