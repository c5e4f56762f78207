import { beforeAll, describe, expect, it } from 'vitest';
import { describeSeed } from '../../src/cli/banner.ts';
import { seedDemo, type DemoSeed } from '../../src/db/seed.ts';
import { useApp } from '../support/app.ts';
import { expectError } from '../support/assertions.ts';
import { V3, v3, type Reply } from '../support/http.ts';

// `seed --demo` on an empty database, then every booking path over real HTTP with the demo keys:
// the banner's class and spa curl lines as printed, and the other targets the summary names
// (README "First hour", "Book a class and a spa slot").

const app = useApp();
let seeded: DemoSeed;
let banner: string;

beforeAll(async () => {
  seeded = (await seedDemo(app.orm.em.fork(), app.clock.now()))!;
  banner = describeSeed(seeded, app.baseUrl);
});

const first = () => seeded.resellers[0];
const key = () => first().api_key;
const one = async <T = Record<string, unknown>>(query: string, params: unknown[] = []) => (await app.sql<T>(query, params))[0];

/** A banner curl line (`curl -s 'URL' -H … -d '…'`) sent as written, `$API_KEY` being `apiKey`. */
async function paste(line: string, apiKey: string): Promise<Reply> {
  const url = /curl -s '([^']+)'/.exec(line)![1];
  const headers = Object.fromEntries(
    [...line.matchAll(/-H (?:'([^']*)'|"([^"]*)")/g)].map((m) => {
      const [name, ...value] = (m[1] ?? m[2].replace('$API_KEY', apiKey)).split(':');
      return [name.trim(), value.join(':').trim()];
    }),
  );
  const body = /-d '([^']*)'/.exec(line)![1];
  expect(url.startsWith(`${app.baseUrl}${V3}`)).toBe(true);
  return v3(app, url.slice(`${app.baseUrl}${V3}`.length), { raw: body, headers });
}

/** The banner's curl line that posts to `path`. */
const curlLine = (path: string) => banner.split('\n').find((l) => l.trim().startsWith('curl') && l.includes(`${V3}${path}'`))!;

const bookClass = (classInstanceId: string, clientId: string, apiKey = key()) =>
  v3(app, '/bookings/class', { key: apiKey, body: { class_instance_id: classInstanceId, client_id: clientId } });
const balance = async (resellerId: string) =>
  Number((await one<{ balance: string }>('select balance from business_account where reseller_id = ?', [resellerId])).balance);
const creditBalance = async (clientId: string) => (await v3(app, `/clients/${clientId}`, { key: key() })).body.credit_balance as number;

describe('seed --demo: booking targets', () => {
  it('gives each reseller demo clients holding passes issued by the API use case, and names a target for every path', async () => {
    const now = app.clock.now().getTime();
    for (const r of seeded.resellers) {
      // Funded so that the prepaid pass leaves the round demo balance, the row agreeing.
      expect(r.balance).toBe(1_000_000);
      expect(await balance(r.id)).toBe(r.balance);
      expect(r.clients.map((c) => [c.name, c.pass_name, c.gym_visits_left])).toEqual([
        ['Alex Morgan', 'Premium Quarterly', null],
        ['Sam Rivera', 'Flex Monthly', 1],
      ]);
      for (const c of r.clients) {
        const res = await v3(app, `/clients/${c.id}`, { key: r.api_key });
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({
          id: c.id,
          email: c.email,
          active_pass: { id: c.issued_pass_id, pass_id: c.pass_id, status: 'ACTIVE' },
        });
      }
      const b = r.bookings;
      expect([b.client_id, b.visits_client_id]).toEqual(r.clients.map((c) => c.id));
      for (const target of [b.class, b.copay_class, b.last_spot_class]) {
        expect(target).not.toBeNull();
        const row = await one<{ starts_at: Date; spots_left: number; tier: string; timezone: string }>(
          `select i.starts_at, i.capacity - i.spots_taken as spots_left, p.tier, p.timezone
          from class_instance i join class c on c.id = i.class_id join provider p on p.id = c.provider_id where i.id = ?`,
          [target!.class_instance_id],
        );
        expect(new Date(row.starts_at).getTime()).toBeGreaterThanOrEqual(now + 24 * 3600_000 - 60_000);
        expect({ spots_left: row.spots_left, tier: row.tier, timezone: row.timezone }).toEqual({
          spots_left: target!.spots_left,
          tier: target!.tier,
          timezone: target!.timezone,
        });
      }
      expect(['BRONZE', 'SILVER']).toContain(b.class!.tier);
      expect(b.copay_class!.tier).toBe('PLATINUM');
      expect(b.last_spot_class!.spots_left).toBe(1);
      expect(['SILVER', 'GOLD']).toContain(b.spa!.tier);
      expect(['BRONZE', 'PLATINUM']).toContain(b.copay_spa!.tier);
      // Sam's month: seven classes booked through the use case, seven visits on the pass and its ledger.
      const sam = r.clients[1];
      const [pass] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [
        sam.issued_pass_id,
      ]);
      expect(pass.visits_used.GYM).toBe(7);
      const listed = await v3(app, `/clients/${sam.id}/bookings?limit=100`, { key: r.api_key });
      expect(listed.body.data).toHaveLength(7);
      for (const booking of listed.body.data) expect(booking).toMatchObject({ type: 'class', status: 'PENDING', visits_deducted: 1 });
    }
    // Each reseller has its own targets, so one reseller's bookings never fill another's.
    const ids = seeded.resellers.flatMap((r) => [
      r.bookings.class!.class_instance_id,
      r.bookings.copay_class!.class_instance_id,
      r.bookings.last_spot_class!.class_instance_id,
      r.bookings.spa!.spa_id,
      r.bookings.copay_spa!.spa_id,
    ]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps providers in more than one time zone', async () => {
    const zones = await app.sql<{ timezone: string }>('select distinct timezone from provider order by 1');
    expect(zones.length).toBeGreaterThan(1);
  });
});

describe('seed --demo: every booking path over HTTP', () => {
  it("the banner's class curl books: 201 PENDING with a visit taken; the client's bookings list it; a cancel refunds in full", async () => {
    const line = curlLine('/bookings/class');
    expect(line).toContain(`"class_instance_id": "${first().bookings.class!.class_instance_id}"`);
    expect(line).toContain('"Authorization: Bearer $API_KEY"');
    expect(banner.split(key())).toHaveLength(2); // the key is printed once, in its reseller's lines
    const res = await paste(line, key());
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      object: 'class_booking_initiation',
      status: 'PENDING',
      copay_required: false,
      additional_visits_required: false,
      class_instance_id: first().bookings.class!.class_instance_id,
      visits_deducted: 1,
      date: first().bookings.class!.date,
      time: first().bookings.class!.time,
    });
    const clientId = first().bookings.client_id;
    const listed = await v3(app, `/clients/${clientId}/bookings`, { key: key() });
    expect(listed.body.data.map((b: { id: string }) => b.id)).toEqual([res.body.booking_id]);

    const cancelled = await v3(app, `/bookings/${res.body.booking_id}/cancel`, { key: key(), method: 'POST' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', refund: { policy: 'FULL', visits_restored: 1 } });
  });

  it("the banner's spa curl books a covered spa: 201 PENDING, the services' credits debited", async () => {
    const spa = first().bookings.spa!;
    const line = curlLine('/bookings/spa');
    expect(line).toContain(`"service_ids": ["${spa.service_ids[0]}"]`);
    const before = await creditBalance(first().bookings.client_id);
    const res = await paste(line, key());
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      object: 'spa_booking_initiation',
      copay_required: false,
      status: 'PENDING',
      date: spa.date,
      time: spa.time,
    });
    const booking = (await v3(app, `/bookings/${res.body.booking_id}`, { key: key() })).body;
    expect(booking.credits_charged).toBeGreaterThan(0);
    expect(await creditBalance(first().bookings.client_id)).toBe(before - booking.credits_charged);
  });

  it('the co-pay spa opens a session; its confirm books and debits the co-pay from the business account', async () => {
    const { copay_spa: spa, client_id } = first().bookings;
    const res = await v3(app, '/bookings/spa', {
      key: key(),
      body: { spa_id: spa!.spa_id, service_ids: spa!.service_ids, date: spa!.date, time: spa!.time, client_id },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ copay_required: true, status: 'AWAITING_COPAY', session_id: expect.stringMatching(/^sess_/) });
    expect(res.body.copay_amount).toBeGreaterThan(0);
    const before = await balance(first().id);
    const confirmed = await v3(app, `/bookings/spa/${res.body.session_id}/confirm`, { key: key(), method: 'POST' });
    expect(confirmed.status, confirmed.text).toBe(201);
    expect(confirmed.body).toMatchObject({ object: 'booking', status: 'PENDING', type: 'spa', copay_amount: res.body.copay_amount });
    expect(await balance(first().id)).toBe(before - res.body.copay_amount);
  });

  it('the uncovered class answers copay_required with the gym’s options; confirming one books', async () => {
    const { copay_class: cls, client_id } = first().bookings;
    const res = await bookClass(cls!.class_instance_id, client_id);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ copay_required: true, additional_visits_required: false, status: 'AWAITING_COPAY' });
    expect(res.body.copay_options.length).toBeGreaterThan(0);
    for (const option of res.body.copay_options) expect(option).toMatchObject({ currency: first().currency });
    const [option] = res.body.copay_options;
    const before = await balance(first().id);
    const confirmed = await v3(app, `/bookings/class/${res.body.session_id}/confirm`, {
      key: key(),
      body: { copay_package_id: option.id },
    });
    expect(confirmed.status, confirmed.text).toBe(201);
    expect(confirmed.body).toMatchObject({
      object: 'booking',
      status: 'PENDING',
      class_instance_id: cls!.class_instance_id,
      visits_deducted: 1,
    });
    expect(await balance(first().id)).toBe(before - option.client_copay_amount);
  });

  it("Sam's last visit books, his next class needs extra visits; the confirm takes the last spot, and the class is then full", async () => {
    const { class: cls, last_spot_class: lastSpot, visits_client_id: sam, client_id: alex } = first().bookings;
    const lastVisit = await bookClass(cls!.class_instance_id, sam);
    expect(lastVisit.status, lastVisit.text).toBe(201);
    expect(lastVisit.body).toMatchObject({ status: 'PENDING', visits_deducted: 1 });

    const extra = await bookClass(lastSpot!.class_instance_id, sam);
    expect(extra.status, extra.text).toBe(201);
    expect(extra.body).toMatchObject({
      additional_visits_required: true,
      copay_required: false,
      status: 'AWAITING_VISITS',
      visits_used: 8,
      max_visits: 8,
    });
    expect(extra.body.cost_per_visit).toBeGreaterThan(0);
    const before = await balance(first().id);
    const confirmed = await v3(app, `/bookings/class/${extra.body.session_id}/confirm`, {
      key: key(),
      body: { number_of_visits: 1, duration: 'MONTHLY' },
    });
    expect(confirmed.status, confirmed.text).toBe(201);
    expect(confirmed.body).toMatchObject({ status: 'PENDING', class_instance_id: lastSpot!.class_instance_id });
    expect(await balance(first().id)).toBe(before - extra.body.cost_per_visit);

    expectError(await bookClass(lastSpot!.class_instance_id, alex), 409, 'class_full');
  });

  it("the other reseller's targets work the same with its own key", async () => {
    const r = seeded.resellers[1];
    const b = r.bookings;
    const booked = await bookClass(b.class!.class_instance_id, b.client_id, r.api_key);
    expect(booked.status, booked.text).toBe(201);
    expect(booked.body.status).toBe('PENDING');
    const spa = await v3(app, '/bookings/spa', {
      key: r.api_key,
      body: { spa_id: b.spa!.spa_id, service_ids: b.spa!.service_ids, date: b.spa!.date, time: b.spa!.time, client_id: b.client_id },
    });
    expect(spa.status, spa.text).toBe(201);
    expect(spa.body.copay_required).toBe(false);
    expect((await bookClass(b.last_spot_class!.class_instance_id, b.client_id, r.api_key)).status).toBe(201);
    expectError(await bookClass(b.last_spot_class!.class_instance_id, b.visits_client_id, r.api_key), 409, 'class_full');
    // The first reseller's client is not this reseller's.
    expectError(await bookClass(b.class!.class_instance_id, first().bookings.client_id, r.api_key), 404, 'resource_not_found', 'client_id');
  });
});
