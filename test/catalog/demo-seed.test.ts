import { beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoSeed } from '../../src/db/seed.ts';
import { useApp } from '../support/app.ts';
import { gql, v3 } from '../support/http.ts';

// `seed --demo` on an empty database: a catalogue in which every flow is reachable, and a client's
// "what is near me" query answering from it.

const app = useApp();
let seeded: DemoSeed;

beforeAll(async () => {
  seeded = (await seedDemo(app.orm.em.fork(), app.clock.now()))!;
});

const one = async <T = Record<string, unknown>>(query: string, params: unknown[] = []) => (await app.sql<T>(query, params))[0];
const num = (v: unknown) => Number(v);

describe('seed --demo catalogue', () => {
  it('reports what it created, matching the rows', async () => {
    const c = seeded.catalog!;
    expect(c).not.toBeNull();
    const counts = await one(`select (select count(*) from provider) as providers, (select count(*) from spa_service) as spa_services,
      (select count(*) from copay_option) as copay_options, (select count(*) from class_category) as class_categories,
      (select count(*) from class) as classes, (select count(*) from class_instance) as class_instances`);
    expect(Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, num(v)]))).toEqual({
      providers: c.providers,
      spa_services: c.spa_services,
      copay_options: c.copay_options,
      class_categories: c.class_categories,
      classes: c.classes,
      class_instances: c.class_instances,
    });
  });

  it('has at least 200 providers over 3 cities in 3 zones, both categories and four tiers', async () => {
    expect(num((await one('select count(*) as n from provider')).n)).toBeGreaterThanOrEqual(200);
    const cities = await app.sql<{ city: string; timezone: string; n: string }>(
      'select city, timezone, count(*) as n from provider group by city, timezone order by city',
    );
    expect(cities.map((c) => [c.city, c.timezone])).toEqual([
      ['Berlin', 'Europe/Berlin'],
      ['New York', 'America/New_York'],
      ['Tokyo', 'Asia/Tokyo'],
    ]);
    for (const c of cities) expect(num(c.n)).toBeGreaterThanOrEqual(60);
    const mix = await app.sql<{ category: string; tier: string }>('select distinct category, tier from provider order by 1, 2');
    for (const category of ['GYM', 'SPA']) {
      expect(
        mix
          .filter((m) => m.category === category)
          .map((m) => m.tier)
          .sort(),
      ).toEqual(['BRONZE', 'GOLD', 'PLATINUM', 'SILVER']);
    }
    // Each city's providers lie within ~15 km of its centre, not stacked on one point.
    const spread = await app.sql<{ city: string; points: string; km: number }>(`select p.city, count(distinct (p.lat, p.lon)) as points,
        max(earth_distance(ll_to_earth(p.lat, p.lon), ll_to_earth(c.lat, c.lon))) / 1000 as km
      from provider p join (select city, avg(lat) as lat, avg(lon) as lon from provider group by city) c on c.city = p.city group by p.city`);
    for (const s of spread) {
      expect(num(s.points)).toBeGreaterThan(60);
      expect(s.km).toBeLessThan(15);
    }
  });

  it('opens every provider on some weekday, and gives spas rooms and 3–6 services with credits and co-pay prices', async () => {
    const closed = await one(
      'select count(*) as n from provider where not exists (select 1 from jsonb_each(opening_hours) d where jsonb_array_length(d.value) > 0)',
    );
    expect(num(closed.n)).toBe(0);
    const perSpa = await app.sql<{ n: string; room_capacity: number }>(
      "select count(s.id) as n, p.room_capacity from provider p left join spa_service s on s.provider_id = p.id where p.category = 'SPA' group by p.id",
    );
    expect(perSpa.length).toBeGreaterThan(50);
    for (const s of perSpa) {
      expect(num(s.n)).toBeGreaterThanOrEqual(3);
      expect(num(s.n)).toBeLessThanOrEqual(6);
      expect(s.room_capacity).toBeGreaterThanOrEqual(1);
    }
    expect(
      num((await one('select count(*) as n from spa_service where credits <= 0 or copay_amount is null or copay_amount <= 0')).n),
    ).toBe(0);
  });

  it('gives the gyms the demo passes do not cover co-pay options, and some spas and gyms stay uncovered', async () => {
    const covered = new Set(['GYM BRONZE', 'GYM SILVER', 'GYM GOLD', 'SPA SILVER', 'SPA GOLD']); // the PREMIUM pass, the wider one
    const mix = await app.sql<{ category: string; tier: string }>('select distinct category, tier from provider');
    expect(mix.filter((m) => !covered.has(`${m.category} ${m.tier}`)).length).toBeGreaterThanOrEqual(3);
    const gyms = await app.sql<{ tier: string; options: string }>(
      "select p.tier, count(o.id) as options from provider p left join copay_option o on o.provider_id = p.id where p.category = 'GYM' group by p.id",
    );
    for (const g of gyms) {
      if (g.tier === 'GOLD' || g.tier === 'PLATINUM') expect(num(g.options), g.tier).toBeGreaterThan(0);
    }
    expect(gyms.filter((g) => g.tier === 'PLATINUM').length).toBeGreaterThan(3);
  });

  it('schedules classes at gyms for two weeks of local days, all upcoming, some small and some nearly full', async () => {
    expect(num((await one("select count(*) as n from class c join provider p on p.id = c.provider_id where p.category <> 'GYM'")).n)).toBe(
      0,
    );
    const categories = await app.sql<{ name: string }>('select name from class_category order by name');
    expect(categories.map((c) => c.name)).toEqual(expect.arrayContaining(['Boxing', 'HIIT', 'Pilates', 'Spin', 'Yoga']));
    const perZone = await app.sql<{
      timezone: string;
      first: string;
      last: string;
    }>(`select p.timezone, min(i.local_date)::text as first, max(i.local_date)::text as last
      from class_instance i join class c on c.id = i.class_id join provider p on p.id = c.provider_id group by p.timezone`);
    expect(perZone).toHaveLength(3);
    for (const z of perZone) expect((Date.parse(z.last) - Date.parse(z.first)) / 86_400_000).toBeGreaterThanOrEqual(12);
    // The stored local date is the start's date in the provider's zone.
    expect(
      num(
        (
          await one(`select count(*) as n from class_instance i join class c on c.id = i.class_id join provider p on p.id = c.provider_id
      where (i.starts_at at time zone p.timezone)::date <> i.local_date`)
        ).n,
      ),
    ).toBe(0);
    expect(num((await one('select count(*) as n from class_instance where starts_at <= ?', [app.clock.now()])).n)).toBe(0);
    expect(num((await one('select count(*) as n from class_instance where capacity <= 10')).n)).toBeGreaterThan(0);
    expect(num((await one('select count(*) as n from class_instance where capacity - spots_taken between 1 and 2')).n)).toBeGreaterThan(0);
    expect(num((await one('select count(*) as n from class_instance where spots_taken = 0')).n)).toBeGreaterThan(0);
  });

  it('answers "what is near me" in the first city, nearest first, with a demo key', async () => {
    const city = seeded.catalog!.cities[0];
    const res = await v3(app, `/providers?lat=${city.lat}&lon=${city.lon}&radius_km=5&limit=20`, { key: seeded.resellers[0].api_key });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toHaveLength(20);
    const distances = res.body.data.map((p: { distance_km: number }) => p.distance_km);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    expect(distances.at(-1)).toBeLessThanOrEqual(5);
    for (const p of res.body.data) expect(p).toMatchObject({ object: 'provider', city: city.name, timezone: city.timezone });
    expect(res.body.has_more).toBe(true);
  });

  it('answers the same question through GraphQL, with the same providers in the same order', async () => {
    const city = seeded.catalog!.cities[2];
    const key = seeded.resellers[1].api_key;
    const res = await gql<{ providers: { edges: { node: { id: string; city: string; distanceKm: number } }[] } }>(
      app,
      key,
      'query Near($near: NearInput) { providers(first: 10, near: $near) { edges { node { id city distanceKm } } } }',
      { near: { lat: city.lat, lon: city.lon, radiusKm: 5 } },
    );
    expect(res.status, res.text).toBe(200);
    const nodes = res.body.data!.providers.edges.map((e) => e.node);
    expect(nodes).toHaveLength(10);
    for (const n of nodes) expect(n.city).toBe(city.name);
    const rest = await v3(app, `/providers?lat=${city.lat}&lon=${city.lon}&radius_km=5&limit=10`, { key });
    expect(nodes.map((n) => [n.id, n.distanceKm])).toEqual(
      rest.body.data.map((p: { id: string; distance_km: number }) => [p.id, p.distance_km]),
    );
  });
});
