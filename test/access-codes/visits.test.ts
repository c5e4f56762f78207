import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAccessCodes } from '../../src/modules/access-codes/index.ts';
import { newId } from '../../src/platform/ids.ts';
import { confirmCode, createCode, madeCode, providerKey, redeem } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectError } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { killStartedProcesses, runCli, Service } from '../ops/processes.ts';

// Visits and access codes (docs/partner-guide.md "Access codes"): a code holds its visit from creation, so codes
// and bookings never overdraw a month's cap together; a code that expires unredeemed gives its visit
// back (to its entitlement, or to the pass counter while it is still that month's), swept by serve
// and worker and by `access-codes expire`.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});
afterAll(async () => {
  await killStartedProcesses();
});

let clients = 0;
const newClient = () => anotherClient(app, w, `visits${++clients}@example.com`);
const gymVisits = async (issuedPassId: string) =>
  (await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [issuedPassId]))[0]
    .visits_used.GYM ?? 0;
/** The pass counter and the ledger rows of the pass counter must agree. */
const ledgerOf = async (issuedPassId: string) =>
  Number(
    (
      await app.sql<{ n: string | null }>(
        "select sum(delta) as n from visit_transaction where issued_pass_id = ? and visit_entitlement_id is null and category = 'GYM' and period = '2026-03'",
        [issuedPassId],
      )
    )[0].n ?? 0,
  );
const sweep = () => expireAccessCodes(app.orm.em, { clock: app.clock });

async function setGymVisits(client: { id: string; issuedPassId: string }, used: number) {
  await app.sql(`update issued_pass set visits_used = jsonb_build_object('GYM', ?::int), visits_period = '2026-03' where id = ?`, [
    used,
    client.issuedPassId,
  ]);
  await app.sql(
    `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
                 values (?, ?, ?, ?, 'GYM', '2026-03', ?, 'BOOKING', ?)`,
    [newId('visitTransaction'), w.reseller.id, client.id, client.issuedPassId, used, app.clock.now()],
  );
}

describe('the month’s cap holds across codes and bookings', () => {
  it('two concurrent codes on a pass with one visit left › one code, one additional_visits_required session', async () => {
    const client = await newClient();
    await setGymVisits(client, 7);
    const replies = await Promise.all([0, 1].map(() => createCode(app, w, { client_id: client.id, provider_id: w.gym.id })));
    expect(replies.map((r) => r.status)).toEqual([201, 201]);
    expect(replies.map((r) => r.body.object).sort()).toEqual(['access_code', 'access_code_session']);
    expect(replies.find((r) => r.body.object === 'access_code_session')!.body).toMatchObject({ visits_used: 8, max_visits: 8 });
    expect(await gymVisits(client.issuedPassId)).toBe(8);
    expect(await ledgerOf(client.issuedPassId)).toBe(8);
  });

  it('10 codes and 10 class bookings at once with one visit left › exactly one holds it', async () => {
    const client = await newClient();
    await setGymVisits(client, 7);
    const instances = await Promise.all(Array.from({ length: 10 }, (_, i) => instanceIn(app, w.gym.classId, 30 + i)));
    const replies = await Promise.all([
      ...Array.from({ length: 10 }, () => createCode(app, w, { client_id: client.id })),
      ...instances.map((i) => book.cls(app, w, { class_instance_id: i.id, client_id: client.id })),
    ]);
    expect(
      replies.every((r) => r.status === 201),
      replies.map((r) => r.text).join('\n'),
    ).toBe(true);
    const holding = replies.filter((r) => r.body.object === 'access_code' || r.body.booking_id !== undefined);
    expect(holding).toHaveLength(1);
    expect(await gymVisits(client.issuedPassId)).toBe(8);
    expect(await ledgerOf(client.issuedPassId)).toBe(8);
  });
});

describe('expireAccessCodes (the sweep)', () => {
  it('an unredeemed code past its day becomes EXPIRED and gives its visit back to this month’s counter, once', async () => {
    const client = await newClient();
    const code = await madeCode(app, w, { client_id: client.id, provider_id: w.gym.id });
    const redeemedOne = await madeCode(app, w, { client_id: client.id, provider_id: w.gym.id });
    expect((await redeem(app, await providerKey(app, w.gym.id), redeemedOne.code)).status).toBe(200);
    expect(await gymVisits(client.issuedPassId)).toBe(2);

    app.clock.set(new Date(code.expires_at * 1000 - 1000));
    expect((await sweep()).expired).toBe(0); // a second early: nothing
    app.clock.set(new Date(code.expires_at * 1000));
    const swept = await sweep();
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    expect(swept.visitsRestored).toBeGreaterThanOrEqual(1);
    expect(await app.sql('select status, visit_restored from access_code where client_id = ? order by id', [client.id])).toEqual([
      { status: 'EXPIRED', visit_restored: true },
      { status: 'REDEEMED', visit_restored: null },
    ]);
    expect(await gymVisits(client.issuedPassId)).toBe(1); // the redeemed code's visit stays used
    expect(await ledgerOf(client.issuedPassId)).toBe(1);
    expect(
      await app.sql("select delta, reason, access_code_id from visit_transaction where client_id = ? and reason = 'ACCESS_CODE_EXPIRED'", [
        client.id,
      ]),
    ).toEqual([{ delta: -1, reason: 'ACCESS_CODE_EXPIRED', access_code_id: code.id }]);
    expect(await sweep()).toEqual({ expired: 0, visitsRestored: 0, sessionsExpired: 0 });
    expectError(await redeem(app, await providerKey(app, w.gym.id), code.code), 422, 'access_code_expired');
  });

  it('a code of a bought visit gives it back to its entitlement', async () => {
    const client = await newClient();
    await setGymVisits(client, 8);
    const session = await createCode(app, w, { client_id: client.id, provider_id: w.gym.id });
    const code = (await confirmCode(app, w, session.body.session_id, { number_of_visits: 1, duration: 'ANNUALLY' })).body;
    expect(await app.sql('select visits_used from visit_entitlement where client_id = ?', [client.id])).toEqual([{ visits_used: 1 }]);
    app.clock.set(new Date(code.expires_at * 1000));
    await sweep();
    expect(await app.sql('select visits_used from visit_entitlement where client_id = ?', [client.id])).toEqual([{ visits_used: 0 }]);
    expect(await app.sql('select status, visit_restored from access_code where id = ?', [code.id])).toEqual([
      { status: 'EXPIRED', visit_restored: true },
    ]);
    // The visit is there to use again: the next code takes it without a session.
    app.clock.set(new Date('2026-03-05T08:00:00Z'));
    expect((await madeCode(app, w, { client_id: client.id })).object).toBe('access_code');
  });

  it('a visit of a month gone by is not given back', async () => {
    app.clock.set(new Date('2026-03-31T22:00:00Z'));
    const client = await newClient();
    const code = await madeCode(app, w, { client_id: client.id }); // any gym: the UTC day ends at 1 April 00:00
    expect(code.expires_at).toBe(Date.parse('2026-04-01T00:00:00Z') / 1000);
    app.clock.set(new Date('2026-04-01T00:05:00Z'));
    await sweep();
    expect(await app.sql('select status, visit_restored from access_code where id = ?', [code.id])).toEqual([
      { status: 'EXPIRED', visit_restored: false },
    ]);
    expect(
      await app.sql("select count(*)::int as n from visit_transaction where access_code_id = ? and reason = 'ACCESS_CODE_EXPIRED'", [
        code.id,
      ]),
    ).toEqual([{ n: 0 }]);
    expect(await gymVisits(client.issuedPassId)).toBe(1); // March's counter keeps its visit; April's starts at zero
  });
});

describe('the sweep as an operator and a background job run it', () => {
  /** A code made the day before the real now, so processes on the real clock find it expired. */
  async function staleCode() {
    app.clock.set(new Date(Date.now() - 2 * 86_400_000));
    const fresh = await createBookingWorld(app);
    const client = await anotherClient(app, fresh, 'stale@example.com');
    return madeCode(app, fresh, { client_id: client.id, provider_id: fresh.gym.id });
  }
  const statusOf = async (id: string) => (await app.sql<{ status: string }>('select status from access_code where id = ?', [id]))[0].status;

  it('access-codes expire (CLI) expires them once and prints how many', async () => {
    const code = await staleCode();
    const first = await runCli(['access-codes', 'expire'], { DATABASE_URL: app.databaseUrl });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      expired: expect.any(Number),
      visits_restored: expect.any(Number),
      sessions_expired: expect.any(Number),
    });
    expect(JSON.parse(first.stdout).expired).toBeGreaterThanOrEqual(1);
    expect(await statusOf(code.id)).toBe('EXPIRED');
    const second = await runCli(['access-codes', 'expire'], { DATABASE_URL: app.databaseUrl });
    expect(JSON.parse(second.stdout)).toEqual({ expired: 0, visits_restored: 0, sessions_expired: 0 });
    const usage = await runCli(['access-codes', 'expire', 'now'], { DATABASE_URL: app.databaseUrl });
    expect(usage.code).toBe(2);
  }, 60_000);

  it('worker runs the sweep beside the session sweep', async () => {
    const code = await staleCode();
    const worker = new Service(['worker'], { DATABASE_URL: app.databaseUrl, SESSION_SWEEP_MS: '50' });
    await worker.waitForStdout(/"msg":"worker started"/);
    const deadline = Date.now() + 20_000;
    while ((await statusOf(code.id)) !== 'EXPIRED') {
      if (Date.now() > deadline) throw new Error('the worker did not expire the code');
      await new Promise((r) => setTimeout(r, 50));
    }
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});
