import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createClass, createClassCategory, createClassInstance, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// GET /classes and Query.classes: every filter, proximity order with distance_km, and every
// validation error with its param. The catalogue is shared: tests isolate their rows with a
// category (or a place) of their own.

const NOW = new Date('2027-03-10T12:00:00Z');
const app = useApp({}, { now: NOW });
let reseller: TestReseller;

beforeAll(async () => {
  reseller = await createReseller(app);
});

const ids = (body: { data: { id: string }[] }) => body.data.map((c) => c.id);
const uniqueName = (base: string) => `${base} ${Math.random().toString(36).slice(2, 8)}`;

describe('GET /classes', () => {
  it('answers class objects newest first with the provider name, tier and category name', async () => {
    const category = await createClassCategory(app, { name: uniqueName('Barre') });
    const gym = await createProvider(app, { name: 'Iron Works', tier: 'GOLD' });
    const older = await createClass(app, gym.id, category.id, { name: 'Barre Basics', durationMinutes: 45 });
    const newer = await createClass(app, gym.id, category.id, { name: 'Barre Burn', durationMinutes: 30 });
    const res = await v3(app, `/classes?category=${encodeURIComponent(category.name)}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [
        {
          object: 'class',
          id: newer.id,
          name: 'Barre Burn',
          description: 'A class for tests',
          category: category.name,
          provider_id: gym.id,
          provider_name: 'Iron Works',
          tier: 'GOLD',
          duration_minutes: 30,
        },
        {
          object: 'class',
          id: older.id,
          name: 'Barre Basics',
          description: 'A class for tests',
          category: category.name,
          provider_id: gym.id,
          provider_name: 'Iron Works',
          tier: 'GOLD',
          duration_minutes: 45,
        },
      ],
      has_more: false,
      url: '/v3/api/business/reseller/classes',
      message: 'Classes retrieved successfully',
    });
  });

  it('category › matches the name in any case and only that category', async () => {
    const boxing = await createClassCategory(app, { name: uniqueName('Boxing') });
    const other = await createClassCategory(app, { name: uniqueName('Zumba') });
    const gym = await createProvider(app);
    const box = await createClass(app, gym.id, boxing.id);
    await createClass(app, gym.id, other.id);
    for (const name of [boxing.name, boxing.name.toUpperCase(), boxing.name.toLowerCase()]) {
      const res = await v3(app, `/classes?category=${encodeURIComponent(name)}`, { key: reseller.key });
      expect(ids(res.body)).toEqual([box.id]);
    }
  });

  it("provider_id › only that provider's classes", async () => {
    const category = await createClassCategory(app);
    const [a, b] = [await createProvider(app), await createProvider(app)];
    const ofA = await createClass(app, a.id, category.id);
    await createClass(app, b.id, category.id);
    const res = await v3(app, `/classes?provider_id=${a.id}`, { key: reseller.key });
    expect(ids(res.body)).toEqual([ofA.id]);
  });

  it('date › classes with a SCHEDULED instance on that local date (not a cancelled one, not another day)', async () => {
    const category = await createClassCategory(app);
    const gym = await createProvider(app, { timezone: 'Europe/Berlin' });
    const held = await createClass(app, gym.id, category.id);
    const cancelled = await createClass(app, gym.id, category.id);
    const otherDay = await createClass(app, gym.id, category.id);
    await createClassInstance(app, held.id, new Date('2027-03-20T09:00:00Z'));
    await createClassInstance(app, held.id, new Date('2027-03-20T17:00:00Z'));
    await createClassInstance(app, cancelled.id, new Date('2027-03-20T09:00:00Z'), { status: 'CANCELLED' });
    await createClassInstance(app, otherDay.id, new Date('2027-03-21T09:00:00Z'));
    const q = `category=${encodeURIComponent(category.name)}`;
    expect(ids((await v3(app, `/classes?${q}&date=2027-03-20`, { key: reseller.key })).body)).toEqual([held.id]);
    expect(ids((await v3(app, `/classes?${q}&date=2027-03-21`, { key: reseller.key })).body)).toEqual([otherDay.id]);
    expect(ids((await v3(app, `/classes?${q}&date=2027-03-22`, { key: reseller.key })).body)).toEqual([]);

    // Paging keeps the date filter, and a class not held that day is no cursor of the list.
    const alsoHeld = await createClass(app, gym.id, category.id);
    await createClassInstance(app, alsoHeld.id, new Date('2027-03-20T12:00:00Z'));
    const page1 = await v3(app, `/classes?${q}&date=2027-03-20&limit=1`, { key: reseller.key });
    expect([ids(page1.body), page1.body.has_more]).toEqual([[alsoHeld.id], true]);
    const page2 = await v3(app, `/classes?${q}&date=2027-03-20&limit=1&starting_after=${alsoHeld.id}`, { key: reseller.key });
    expect([ids(page2.body), page2.body.has_more]).toEqual([[held.id], false]);
    const bad = await v3(app, `/classes?${q}&date=2027-03-20&starting_after=${otherDay.id}`, { key: reseller.key });
    expect(bad.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });

  it('pages newest first with limit and both cursors; a class outside the filters is not a cursor', async () => {
    const category = await createClassCategory(app);
    const gym = await createProvider(app);
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await createClass(app, gym.id, category.id)).id);
    const newestFirst = [...made].reverse();
    const q = `category=${encodeURIComponent(category.name)}`;
    const first = await v3(app, `/classes?${q}&limit=2`, { key: reseller.key });
    expect(ids(first.body)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const next = await v3(app, `/classes?${q}&limit=2&starting_after=${newestFirst[1]}`, { key: reseller.key });
    expect(ids(next.body)).toEqual(newestFirst.slice(2, 4));
    const last = await v3(app, `/classes?${q}&limit=2&starting_after=${newestFirst[3]}`, { key: reseller.key });
    expect(ids(last.body)).toEqual(newestFirst.slice(4));
    expect(last.body.has_more).toBe(false);
    const back = await v3(app, `/classes?${q}&limit=2&ending_before=${newestFirst[4]}`, { key: reseller.key });
    expect(ids(back.body)).toEqual(newestFirst.slice(2, 4));
    expect(back.body.has_more).toBe(true);

    const stranger = await createClass(app, gym.id, (await createClassCategory(app)).id);
    const bad = await v3(app, `/classes?${q}&starting_after=${stranger.id}`, { key: reseller.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });

  it('lat/lon › nearest first within radius_km with distance_km, ties (classes of one provider) by id, across pages', async () => {
    const category = await createClassCategory(app);
    // Around (10, 20): 0.1° of latitude is 11.132 km on earthdistance's sphere.
    const here = await createProvider(app, { lat: 10, lon: 20, name: 'Here', tier: 'BRONZE' });
    const near = await createProvider(app, { lat: 10.1, lon: 20, name: 'Near' });
    const far = await createProvider(app, { lat: 10.3, lon: 20, name: 'Far' });
    const beyond = await createProvider(app, { lat: 11, lon: 20, name: 'Beyond' }); // 111 km
    const farClass = await createClass(app, far.id, category.id);
    const nearA = await createClass(app, near.id, category.id);
    const hereClass = await createClass(app, here.id, category.id);
    const nearB = await createClass(app, near.id, category.id);
    await createClass(app, beyond.id, category.id);
    const q = `category=${encodeURIComponent(category.name)}&lat=10&lon=20&radius_km=40`;
    const res = await v3(app, `/classes?${q}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: string; distance_km: number }) => [c.id, c.distance_km])).toEqual([
      [hereClass.id, 0],
      [nearA.id, 11.132],
      [nearB.id, 11.132],
      [farClass.id, 33.396],
    ]);
    expect(res.body.data[0]).toMatchObject({ provider_name: 'Here', tier: 'BRONZE', category: category.name });

    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await v3(app, `/classes?${q}&limit=1${after ? `&starting_after=${after}` : ''}`, { key: reseller.key });
      seen.push(...ids(page.body));
      if (!page.body.has_more) break;
      after = seen.at(-1);
    }
    expect(seen).toEqual([hereClass.id, nearA.id, nearB.id, farClass.id]);

    // The default radius is 50 km: 111 km away stays out.
    const wide = await v3(app, `/classes?category=${encodeURIComponent(category.name)}&lat=10&lon=20`, { key: reseller.key });
    expect(ids(wide.body)).toEqual([hereClass.id, nearA.id, nearB.id, farClass.id]);
    const narrow = await v3(app, `/classes?category=${encodeURIComponent(category.name)}&lat=10&lon=20&radius_km=5`, { key: reseller.key });
    expect(ids(narrow.body)).toEqual([hereClass.id]);
  });

  it('all filters together › category, date, provider and proximity combine', async () => {
    const category = await createClassCategory(app);
    const gym = await createProvider(app, { lat: -30, lon: 150, timezone: 'Australia/Sydney' });
    const other = await createProvider(app, { lat: -30.01, lon: 150, timezone: 'Australia/Sydney' });
    const wanted = await createClass(app, gym.id, category.id);
    const wrongDay = await createClass(app, gym.id, category.id);
    const wrongProvider = await createClass(app, other.id, category.id);
    // 09:00 in Sydney (UTC+11 in March) on the 20th is 22:00 UTC on the 19th.
    await createClassInstance(app, wanted.id, new Date('2027-03-19T22:00:00Z'), { timezone: 'Australia/Sydney' });
    await createClassInstance(app, wrongDay.id, new Date('2027-03-20T22:00:00Z'), { timezone: 'Australia/Sydney' });
    await createClassInstance(app, wrongProvider.id, new Date('2027-03-19T22:00:00Z'), { timezone: 'Australia/Sydney' });
    const res = await v3(
      app,
      `/classes?category=${encodeURIComponent(category.name)}&date=2027-03-20&provider_id=${gym.id}&lat=-30&lon=150&radius_km=10`,
      { key: reseller.key },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: string; distance_km: number }) => [c.id, c.distance_km])).toEqual([[wanted.id, 0]]);
  });

  describe('bad input › 400 validation_error naming the param', () => {
    it.each([
      ['category=No%20Such%20Category', 'category'],
      ['category=', 'category'],
      ['date=2027-3-1', 'date'],
      ['date=2027-02-30', 'date'],
      ['date=tomorrow', 'date'],
      ['provider_id=prov_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'provider_id'],
      ['provider_id=nope', 'provider_id'],
      ['lat=10', 'lon'],
      ['lon=10', 'lat'],
      ['lat=91&lon=0', 'lat'],
      ['lat=0&lon=-181', 'lon'],
      ['lat=abc&lon=0', 'lat'],
      ['lat=0&lon=0&radius_km=0', 'radius_km'],
      ['lat=0&lon=0&radius_km=501', 'radius_km'],
      ['lat=0&lon=0&radius_km=-1', 'radius_km'],
      ['radius_km=10', 'radius_km'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['starting_after=a&ending_before=b', 'ending_before'],
      ['tier=GOLD', 'tier'],
    ])('?%s › param %s', async (query, param) => {
      const res = await v3(app, `/classes?${query}`, { key: reseller.key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param });
    });

    it('an inactive category is unknown to the filter', async () => {
      const retired = await createClassCategory(app, { active: false });
      const res = await v3(app, `/classes?category=${encodeURIComponent(retired.name)}`, { key: reseller.key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'category' });
    });
  });

  it('without an API key › 401 invalid_api_key', async () => {
    const res = await v3(app, '/classes');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'invalid_api_key' });
  });
});

describe('Query.classes', () => {
  const LIST = `query L($category: String, $date: Date, $near: NearInput, $providerId: ID, $first: Int, $after: String) {
    classes(category: $category, date: $date, near: $near, providerId: $providerId, first: $first, after: $after) {
      edges { cursor node { id name durationMinutes distanceKm category { id name } provider { id name tier } } }
      pageInfo { hasNextPage endCursor }
    }
  }`;

  it('filters and orders like GET /classes, with provider and category', async () => {
    const category = await createClassCategory(app);
    const here = await createProvider(app, { lat: 40, lon: -100, name: 'Plains Gym', tier: 'SILVER', timezone: 'America/Chicago' });
    const near = await createProvider(app, { lat: 40.1, lon: -100, name: 'Next Town' });
    const a = await createClass(app, near.id, category.id, { name: 'Spin' });
    const b = await createClass(app, here.id, category.id, { name: 'HIIT', durationMinutes: 40 });
    await createClassInstance(app, b.id, new Date('2027-03-20T15:00:00Z'), { timezone: 'America/Chicago' });
    const res = await gql(app, reseller.key, LIST, { category: category.name.toUpperCase(), near: { lat: 40, lon: -100, radiusKm: 20 } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.classes.edges).toEqual([
      {
        cursor: b.id,
        node: {
          id: b.id,
          name: 'HIIT',
          durationMinutes: 40,
          distanceKm: 0,
          category: { id: category.id, name: category.name },
          provider: { id: here.id, name: 'Plains Gym', tier: 'SILVER' },
        },
      },
      {
        cursor: a.id,
        node: {
          id: a.id,
          name: 'Spin',
          durationMinutes: 60,
          distanceKm: 11.132,
          category: { id: category.id, name: category.name },
          provider: { id: near.id, name: 'Next Town', tier: 'SILVER' },
        },
      },
    ]);
    const dated = await gql(app, reseller.key, LIST, { category: category.name, date: '2027-03-20' });
    expect(
      dated.body.data.classes.edges.map((e: { node: { id: string; distanceKm: number | null } }) => [e.node.id, e.node.distanceKm]),
    ).toEqual([[b.id, null]]);
    const byProvider = await gql(app, reseller.key, LIST, { providerId: near.id });
    expect(byProvider.body.data.classes.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([a.id]);
    const paged = await gql(app, reseller.key, LIST, { category: category.name, first: 1 });
    expect(paged.body.data.classes).toEqual({
      edges: [expect.objectContaining({ cursor: b.id })],
      pageInfo: { hasNextPage: true, endCursor: b.id },
    });
    const rest = await gql(app, reseller.key, LIST, { category: category.name, first: 1, after: b.id });
    expect(rest.body.data.classes).toEqual({
      edges: [expect.objectContaining({ cursor: a.id })],
      pageInfo: { hasNextPage: false, endCursor: a.id },
    });
  });

  it.each([
    [{ category: 'No such thing' }, 'category'],
    [{ providerId: 'prov_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 'providerId'],
    [{ near: { lat: 95, lon: 0 } }, 'near.lat'],
    [{ near: { lat: 0, lon: 0, radiusKm: 0 } }, 'near.radiusKm'],
    [{ near: { lat: 0, lon: 0, radiusKm: 600 } }, 'near.radiusKm'],
    [{ first: 101 }, 'first'],
  ])('%j › a validation_error naming %s', async (variables, param) => {
    const res = await gql(app, reseller.key, LIST, variables);
    expect(res.body.data?.classes ?? null).toBeNull();
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param });
  });

  it('a malformed date is refused by the Date scalar', async () => {
    const res = await gql(app, reseller.key, LIST, { date: '2027-02-30' });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].message).toContain('Date must be YYYY-MM-DD');
  });
});
