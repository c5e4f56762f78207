import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createProvider } from '../support/catalog.ts';
import { createPassPackage, createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { statementsDuring } from './support.ts';

const app = useApp({}, { now: new Date('2027-03-10T12:00:00Z') });
let reseller: TestReseller;
beforeAll(async () => {
  reseller = await createReseller(app);
});

// The catalogue is shared by the tests of this file, so each test's passes cover tier labels
// of its own: its counts and lists see only its providers.
let labels = 0;
const tiersOf = (...names: string[]) => {
  labels++;
  return names.map((n) => `${n}${labels}`);
};
const ids = (body: { data: { id: string }[] }) => body.data.map((p) => p.id);

/** A pass covering GYM bronze+silver and SPA gold, and the catalogue around it. */
async function coverage(at = { lat: 48.8566, lon: 2.3522 }) {
  const [bronze, silver, gold] = tiersOf('BRONZE', 'SILVER', 'GOLD');
  const pass = await createPassPackage(app, reseller, {
    categories: [
      // Labels are compared upper case: a pass written in lower case covers the same providers.
      { type: 'GYM', tiers: [bronze.toLowerCase(), silver], visits_allowed: 8, credit_allocated: 0 },
      { type: 'SPA', tiers: [gold], visits_allowed: null, credit_allocated: 50 },
    ],
  });
  const place = { ...at, timezone: 'Europe/Paris' };
  const covered = [
    await createProvider(app, { ...place, category: 'GYM', tier: bronze }),
    await createProvider(app, { ...place, lat: at.lat + 0.05, category: 'GYM', tier: silver }),
    await createProvider(app, { ...place, lat: at.lat + 0.02, category: 'SPA', tier: gold }),
  ];
  const notCovered = [
    await createProvider(app, { ...place, category: 'GYM', tier: gold }),
    await createProvider(app, { ...place, category: 'SPA', tier: silver }),
    await createProvider(app, { ...place, category: 'SPA', tier: bronze }),
  ];
  return { pass, covered, notCovered };
}

describe('GET /passes/{id}/providers', () => {
  it('lists only providers whose category and tier one of the pass categories covers, newest first', async () => {
    const { pass, covered } = await coverage();
    const res = await v3(app, `/passes/${pass.id}/providers`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'list',
      has_more: false,
      url: `/v3/api/business/reseller/passes/${pass.id}/providers`,
      message: expect.any(String),
    });
    expect(ids(res.body)).toEqual(covered.map((p) => p.id).reverse());
    expect(res.body.data[0]).toMatchObject({ object: 'provider', category: 'SPA', timezone: 'Europe/Paris' });
    expect(res.body.data[0]).not.toHaveProperty('distance_km');
  });

  it('with lat+lon › covered providers within the radius, nearest first with distance_km', async () => {
    const at = { lat: 45.764, lon: 4.8357 }; // Lyon
    const { pass, covered } = await coverage(at);
    await createProvider(app, { lat: at.lat + 1, lon: at.lon, category: 'GYM', tier: covered[0].tier }); // ≈ 111 km
    const res = await v3(app, `/passes/${pass.id}/providers?lat=${at.lat}&lon=${at.lon}&radius_km=20`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([covered[0].id, covered[2].id, covered[1].id]);
    expect(res.body.data.map((p: { distance_km: number }) => p.distance_km)).toEqual([0, 2.226, 5.566]);

    const paged = await v3(
      app,
      `/passes/${pass.id}/providers?lat=${at.lat}&lon=${at.lon}&radius_km=20&limit=1&starting_after=${covered[2].id}`,
      { key: reseller.key },
    );
    expect(ids(paged.body)).toEqual([covered[1].id]);
    expect(paged.body.has_more).toBe(false);
    const tight = await v3(app, `/passes/${pass.id}/providers?lat=${at.lat}&lon=${at.lon}&radius_km=3`, { key: reseller.key });
    expect(ids(tight.body)).toEqual([covered[0].id, covered[2].id]);
  });

  it('a pass without tiers covers nothing: an empty list', async () => {
    const pass = await createPassPackage(app, reseller, {
      categories: [{ type: 'GYM', tiers: [], visits_allowed: 8, credit_allocated: 0 }],
    });
    await createProvider(app);
    for (const query of ['', '?lat=52.52&lon=13.405']) {
      const res = await v3(app, `/passes/${pass.id}/providers${query}`, { key: reseller.key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], has_more: false });
    }
  });

  it("another reseller's pass, or an unknown one › 404 resource_not_found", async () => {
    const other = await createReseller(app, { name: 'Other' });
    const { pass } = await coverage();
    expect((await v3(app, `/passes/${pass.id}/providers`, { key: other.key })).status).toBe(404);
    for (const id of ['pass_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'whatever']) {
      const res = await v3(app, `/passes/${id}/providers`, { key: reseller.key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_not_found');
    }
  });

  it('validates every query parameter › 400 validation_error with param', async () => {
    const { pass, notCovered } = await coverage();
    const cases: [string, string][] = [
      ['lat=100&lon=0', 'lat'],
      ['lat=0&lon=-200', 'lon'],
      ['lat=1', 'lon'],
      ['lon=1', 'lat'],
      ['lat=0&lon=0&radius_km=0', 'radius_km'],
      ['lat=0&lon=0&radius_km=501', 'radius_km'],
      ['radius_km=5', 'radius_km'],
      ['limit=101', 'limit'],
      ['category=GYM', 'category'],
      ['tier=GOLD', 'tier'],
    ];
    for (const [query, param] of cases) {
      const res = await v3(app, `/passes/${pass.id}/providers?${query}`, { key: reseller.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', param });
    }
    const foreignCursor = await v3(app, `/passes/${pass.id}/providers?starting_after=${notCovered[0].id}`, { key: reseller.key });
    expect(foreignCursor.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });
});

describe('provider_count of passes', () => {
  it('REST list and single pass count the providers the pass covers; GraphQL providerCount agrees', async () => {
    const owner = await createReseller(app, { name: 'Counting' });
    const { pass } = await coverage();
    const [own] = tiersOf('OWN');
    const mine = await createPassPackage(app, owner, {
      categories: [{ type: 'SPA', tiers: [own, pass.categories[1].tiers[0]], visits_allowed: null, credit_allocated: 0 }],
    });
    const empty = await createPassPackage(app, owner, { categories: [] });
    await createProvider(app, { category: 'SPA', tier: own });
    await createProvider(app, { category: 'GYM', tier: own }); // a GYM with a tier the pass lists for SPA only

    expect((await v3(app, `/passes/${pass.id}`, { key: reseller.key })).body.provider_count).toBe(3);
    const list = await v3(app, '/passes?limit=100', { key: owner.key });
    expect(list.body.data.map((p: { id: string; provider_count: number }) => [p.id, p.provider_count])).toEqual([
      [empty.id, 0],
      [mine.id, 2],
    ]);
    const listed = await v3(app, `/passes/${mine.id}/providers?limit=100`, { key: owner.key });
    expect(listed.body.data).toHaveLength(2);

    const res = await gql(
      app,
      owner.key,
      '{ passes(first: 10) { edges { node { id providerCount providers(first: 10) { edges { node { id tier category } } } } } } }',
    );
    expect(res.body.errors).toBeUndefined();
    expect(
      res.body.data.passes.edges.map((e: { node: { id: string; providerCount: number; providers: { edges: unknown[] } } }) => [
        e.node.id,
        e.node.providerCount,
        e.node.providers.edges.length,
      ]),
    ).toEqual([
      [empty.id, 0, 0],
      [mine.id, 2, 2],
    ]);
  });

  // The counts come from provider_tier, which triggers on provider keep per (category, tier)
  // (migration Migration20261127000000_provider_tiers): every kind of write must keep it equal to
  // counting the providers, and the pass list must follow.
  it('follow every write of a provider: inserts, a multi-row upsert that moves tiers, updates and deletes', async () => {
    const owner = await createReseller(app, { name: 'Tiers' });
    const [gold, silver] = tiersOf('MOVEGOLD', 'MOVESILVER');
    const pass = await createPassPackage(app, owner, {
      categories: [{ type: 'GYM', tiers: [gold.toLowerCase()], visits_allowed: null, credit_allocated: 0 }],
    });
    const count = async () =>
      (await v3(app, `/passes?limit=100`, { key: owner.key })).body.data.find((p: { id: string }) => p.id === pass.id).provider_count;
    const counted = () => app.sql('select category, tier, providers from provider_tier where providers <> 0 order by category, tier');
    const truth = () =>
      app.sql('select category, tier, count(*)::int as providers from provider group by category, tier order by category, tier');

    const providers = [];
    for (let i = 0; i < 3; i++) providers.push(await createProvider(app, { category: 'GYM', tier: gold }));
    expect(await count()).toBe(3);
    // One statement writing several rows, as the catalogue import's upsert does: one into the tier, two out of it.
    const moved = await app.sql<{ id: string }>(
      `insert into provider select (jsonb_populate_record(null::provider, to_jsonb(p) || jsonb_build_object('id', p.id || 'x'))).* from provider p where p.id = ?
       union all select (jsonb_populate_record(null::provider, to_jsonb(p) || jsonb_build_object('tier', ?::text))).* from provider p where p.id in (?, ?)
       on conflict (id) do update set tier = excluded.tier returning id`,
      [providers[0].id, silver, providers[1].id, providers[2].id],
    );
    expect(moved).toHaveLength(3);
    expect(await count()).toBe(2);
    await app.sql('update provider set tier = ? where id = ?', [gold, providers[1].id]);
    await app.sql('update provider set name = ? where tier = ?', ['Renamed', gold]); // no pair moves
    expect(await count()).toBe(3);
    await app.sql('delete from provider where id = ?', [`${providers[0].id}x`]);
    expect(await count()).toBe(2);
    expect(await counted()).toEqual(await truth());
  });

  it('a page of passes costs one counting statement, in REST and in GraphQL', async () => {
    const owner = await createReseller(app, { name: 'Batch' });
    for (let i = 0; i < 5; i++) await createPassPackage(app, owner);
    // The coverage count (its own statement in GraphQL, inside the list's one statement in REST).
    const counting = (sql: string[]) => sql.filter((q) => /jsonb_array_elements\(pp.categories\)/.test(q)).length;
    expect(counting(await statementsDuring(app, () => v3(app, '/passes', { key: owner.key })))).toBe(1);
    expect(
      counting(await statementsDuring(app, () => gql(app, owner.key, '{ passes(first: 10) { edges { node { id providerCount } } } }'))),
    ).toBe(1);
  });
});

describe('GraphQL Pass.providers', () => {
  it('lists the covered providers near a point, with distanceKm', async () => {
    const at = { lat: 43.2965, lon: 5.3698 }; // Marseille
    const { pass, covered } = await coverage(at);
    const res = await gql(
      app,
      reseller.key,
      `query($id: ID!, $near: NearInput) {
      node(id: $id) { ... on Pass { providerCount providers(near: $near, first: 2) { edges { node { id distanceKm } } pageInfo { hasNextPage } } } }
    }`,
      { id: pass.id, near: { lat: at.lat, lon: at.lon, radiusKm: 20 } },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.node).toEqual({
      providerCount: 3,
      providers: {
        edges: [{ node: { id: covered[0].id, distanceKm: 0 } }, { node: { id: covered[2].id, distanceKm: 2.226 } }],
        pageInfo: { hasNextPage: true },
      },
    });
    const bad = await gql(
      app,
      reseller.key,
      `query($id: ID!) { node(id: $id) { ... on Pass { providers(near: { lat: 0, lon: 0, radiusKm: 600 }) { edges { cursor } } } } }`,
      { id: pass.id },
    );
    expect(bad.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'near.radiusKm' });
  });
});

describe('GraphQL Pass.providers for a page of passes', () => {
  it("first and last pages, with and without near, match each pass's REST list and cost one statement per selection", async () => {
    const owner = await createReseller(app, { name: 'Pages' });
    const at = { lat: 50.8503, lon: 4.3517 }; // Brussels
    const passes = [];
    for (let i = 0; i < 3; i++) {
      const [gym, spa] = tiersOf('GYMT', 'SPAT');
      passes.push(
        await createPassPackage(app, owner, {
          categories: [
            { type: 'GYM', tiers: [gym], visits_allowed: 8, credit_allocated: 0 },
            { type: 'SPA', tiers: [spa.toLowerCase()], visits_allowed: null, credit_allocated: 0 },
          ],
        }),
      );
      // i + 2 covered providers each, at growing distances, two of them at the very same spot.
      for (let j = 0; j < i + 2; j++) {
        await createProvider(app, {
          lat: at.lat + 0.01 * Math.max(j - 1, 0),
          lon: at.lon,
          category: j % 2 ? 'SPA' : 'GYM',
          tier: j % 2 ? spa : gym,
        });
      }
      await createProvider(app, { ...at, category: 'SPA', tier: gym }); // a tier the pass has for GYM only
    }
    const query = `query($near: NearInput) { passes(first: 10) { edges { node { id
      newest: providers(first: 2) { edges { node { id distanceKm } } pageInfo { hasNextPage hasPreviousPage } }
      oldest: providers(last: 2) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }
      nearest: providers(first: 3, near: $near) { edges { node { id distanceKm } } pageInfo { hasNextPage } }
    } } } }`;
    let res!: Awaited<ReturnType<typeof gql>>;
    const sql = await statementsDuring(app, async () => {
      res = await gql(app, owner.key, query, { near: { ...at, radiusKm: 10 } });
    });
    expect(res.body.errors).toBeUndefined();
    expect(sql.filter((q) => /cross join lateral \(\s*select p\.\*/.test(q))).toHaveLength(3);

    type Conn = {
      edges: { node: { id: string; distanceKm?: number | null } }[];
      pageInfo: { hasNextPage: boolean; hasPreviousPage?: boolean };
    };
    const nodes = (
      res.body.data as { passes: { edges: { node: { id: string; newest: Conn; oldest: Conn; nearest: Conn } }[] } }
    ).passes.edges.map((e) => e.node);
    expect(nodes.map((n) => n.id)).toEqual(passes.map((p) => p.id).reverse());
    for (const node of nodes) {
      const newestFirst = ids((await v3(app, `/passes/${node.id}/providers?limit=100`, { key: owner.key })).body);
      const nearestRest = (
        await v3(app, `/passes/${node.id}/providers?limit=100&lat=${at.lat}&lon=${at.lon}&radius_km=10`, { key: owner.key })
      ).body.data as { id: string; distance_km: number }[];
      expect(node.newest.edges.map((e) => e.node.id)).toEqual(newestFirst.slice(0, 2));
      expect(node.newest.edges.map((e) => e.node.distanceKm)).toEqual([null, null]);
      expect(node.newest.pageInfo).toEqual({ hasNextPage: newestFirst.length > 2, hasPreviousPage: false });
      expect(node.oldest.edges.map((e) => e.node.id)).toEqual(newestFirst.slice(-2));
      expect(node.oldest.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: newestFirst.length > 2 });
      expect(node.nearest.edges.map((e) => [e.node.id, e.node.distanceKm])).toEqual(
        nearestRest.slice(0, 3).map((p) => [p.id, p.distance_km]),
      );
      expect(node.nearest.pageInfo.hasNextPage).toBe(nearestRest.length > 3);
    }
    expect(nodes.map((n) => n.nearest.edges.length)).toEqual([3, 3, 2]);
  });
});
