import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

const app = useApp({}, { now: new Date('2027-03-10T12:00:00Z') });
let reseller: TestReseller;
beforeAll(async () => {
  reseller = await createReseller(app);
});

// The catalogue is shared by every test of this file: each test lists its own providers through
// a tier label or a place of its own.
let labels = 0;
const uniqueTier = (base: string) => `${base}${++labels}X`;
const ids = (body: { data: { id: string }[] }) => body.data.map((p) => p.id);

describe('GET /providers/{id}', () => {
  it('answers the provider in its own time zone, for providers in three zones', async () => {
    const berlin = await createProvider(app, {
      name: 'Mitte Gym',
      timezone: 'Europe/Berlin',
      city: 'Berlin',
      country: 'DE',
      lat: 52.52,
      lon: 13.405,
      tier: 'GOLD',
    });
    const newYork = await createProvider(app, {
      name: 'SoHo Spa',
      category: 'SPA',
      timezone: 'America/New_York',
      city: 'New York',
      country: 'US',
      lat: 40.72,
      lon: -74.0,
    });
    const tokyo = await createProvider(app, {
      name: 'Shibuya Gym',
      timezone: 'Asia/Tokyo',
      city: 'Tokyo',
      country: 'JP',
      lat: 35.66,
      lon: 139.7,
    });

    const res = await v3(app, `/providers/${berlin.id}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'provider',
      id: berlin.id,
      name: 'Mitte Gym',
      category: 'GYM',
      tier: 'GOLD',
      description: 'A provider for tests',
      address: '1 Test Street',
      city: 'Berlin',
      country: 'DE',
      lat: 52.52,
      lon: 13.405,
      timezone: 'Europe/Berlin',
      cancellation_policy: { free_cancellation_hours: 24, late_cancellation_refund_percent: 50 },
      created: Math.floor(new Date('2027-03-10T12:00:00Z').getTime() / 1000),
    });
    expect((await v3(app, `/providers/${newYork.id}`, { key: reseller.key })).body).toMatchObject({
      timezone: 'America/New_York',
      category: 'SPA',
      country: 'US',
    });
    expect((await v3(app, `/providers/${tokyo.id}`, { key: reseller.key })).body).toMatchObject({ timezone: 'Asia/Tokyo', city: 'Tokyo' });
  });

  it('answers 404 resource_not_found for an unknown or malformed id', async () => {
    for (const id of ['prov_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'nope', 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ']) {
      const res = await v3(app, `/providers/${id}`, { key: reseller.key });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
    }
  });
});

describe('GET /providers filters', () => {
  it('without lat/lon › lists newest first, without distance_km, in the V3 envelope', async () => {
    const tier = uniqueTier('NEW');
    const made = [];
    for (let i = 0; i < 3; i++) {
      app.clock.advance(1000);
      made.push(await createProvider(app, { tier }));
    }
    const res = await v3(app, `/providers?tier=${tier}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'list',
      has_more: false,
      url: '/v3/api/business/reseller/providers',
      message: expect.any(String),
    });
    expect(ids(res.body)).toEqual(made.map((p) => p.id).reverse());
    for (const item of res.body.data) expect(item).not.toHaveProperty('distance_km');
  });

  it('category › any case selects that category only', async () => {
    const tier = uniqueTier('CAT');
    const gym = await createProvider(app, { tier, category: 'GYM' });
    const spa = await createProvider(app, { tier, category: 'SPA' });
    for (const category of ['gym', 'GYM', 'Gym']) {
      expect(ids((await v3(app, `/providers?tier=${tier}&category=${category}`, { key: reseller.key })).body)).toEqual([gym.id]);
    }
    expect(ids((await v3(app, `/providers?tier=${tier}&category=spa`, { key: reseller.key })).body)).toEqual([spa.id]);
    expect(ids((await v3(app, `/providers?tier=${tier}`, { key: reseller.key })).body)).toEqual([spa.id, gym.id]);
  });

  it('tier › any case selects that tier only; an unknown tier is an empty list, not an error', async () => {
    const gold = uniqueTier('GOLD');
    const silver = uniqueTier('SILVER');
    const g = await createProvider(app, { tier: gold });
    await createProvider(app, { tier: silver });
    expect(ids((await v3(app, `/providers?tier=${gold.toLowerCase()}`, { key: reseller.key })).body)).toEqual([g.id]);
    const unknown = await v3(app, '/providers?tier=PLATINUM_NOBODY', { key: reseller.key });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ data: [], has_more: false });
  });

  it('lat+lon › nearest first within 50 km by default, each with distance_km', async () => {
    // Around Sydney: no other test of this file puts anything within 500 km of it.
    const at = { lat: -33.8688, lon: 151.2093 };
    const far = await createProvider(app, { lat: -33.8688, lon: 151.2093 + 0.6, timezone: 'Australia/Sydney' }); // ≈ 55 km
    const near = await createProvider(app, { lat: -33.8688 + 0.01, lon: 151.2093, timezone: 'Australia/Sydney' }); // ≈ 1.1 km
    const middle = await createProvider(app, { lat: -33.8688, lon: 151.2093 + 0.2, timezone: 'Australia/Sydney' }); // ≈ 18.5 km
    const res = await v3(app, `/providers?lat=${at.lat}&lon=${at.lon}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([near.id, middle.id]);
    expect(res.body.data[0].distance_km).toBeCloseTo(1.112, 2);
    expect(res.body.data[1].distance_km).toBeCloseTo(18.5, 0);
    expect(res.body.data[0].timezone).toBe('Australia/Sydney');

    const wide = await v3(app, `/providers?lat=${at.lat}&lon=${at.lon}&radius_km=100`, { key: reseller.key });
    expect(ids(wide.body)).toEqual([near.id, middle.id, far.id]);
    const narrow = await v3(app, `/providers?lat=${at.lat}&lon=${at.lon}&radius_km=10`, { key: reseller.key });
    expect(ids(narrow.body)).toEqual([near.id]);
    const narrowGyms = await v3(app, `/providers?lat=${at.lat}&lon=${at.lon}&radius_km=500&category=SPA`, { key: reseller.key });
    expect(ids(narrowGyms.body)).toEqual([]);
  });

  it('lat+lon with category and tier › both filters apply to the proximity list', async () => {
    const tier = uniqueTier('PROX');
    const at = { lat: -41.2865, lon: 174.7762 }; // Wellington
    const spa = await createProvider(app, { ...at, tier, category: 'SPA', timezone: 'Pacific/Auckland' });
    await createProvider(app, { ...at, tier, category: 'GYM', timezone: 'Pacific/Auckland' });
    await createProvider(app, { ...at, tier: 'OTHER', category: 'SPA', timezone: 'Pacific/Auckland' });
    const res = await v3(app, `/providers?lat=${at.lat}&lon=${at.lon}&category=spa&tier=${tier.toLowerCase()}`, { key: reseller.key });
    expect(ids(res.body)).toEqual([spa.id]);
    expect(res.body.data[0]).toMatchObject({ distance_km: 0, timezone: 'Pacific/Auckland' });
  });
});

describe('GET /providers validation', () => {
  const cases: [string, string][] = [
    ['category=POOL', 'category'],
    ['category=', 'category'],
    ['tier=has%20space', 'tier'],
    ['tier=', 'tier'],
    [`tier=${'A'.repeat(65)}`, 'tier'],
    ['lat=91&lon=0', 'lat'],
    ['lat=-90.5&lon=0', 'lat'],
    ['lat=abc&lon=0', 'lat'],
    ['lat=0&lon=180.01', 'lon'],
    ['lat=0&lon=1e3', 'lon'],
    ['lat=52.5', 'lon'],
    ['lon=13.4', 'lat'],
    ['radius_km=10', 'radius_km'],
    ['lat=0&lon=0&radius_km=0', 'radius_km'],
    ['lat=0&lon=0&radius_km=-5', 'radius_km'],
    ['lat=0&lon=0&radius_km=500.5', 'radius_km'],
    ['lat=0&lon=0&radius_km=ten', 'radius_km'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['starting_after=prov_01JZZZZZZZZZZZZZZZZZZZZZZZ&ending_before=prov_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'ending_before'],
    ['near=berlin', 'near'],
  ];
  for (const [query, param] of cases) {
    it(`?${query.slice(0, 60)} › 400 validation_error on ${param}`, async () => {
      const res = await v3(app, `/providers?${query}`, { key: reseller.key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param });
    });
  }

  it('radius_km=500 is the largest radius accepted', async () => {
    expect((await v3(app, '/providers?lat=0&lon=0&radius_km=500', { key: reseller.key })).status).toBe(200);
  });

  it('a cursor that is not an item of this list › 400 invalid_cursor, with and without lat/lon', async () => {
    const tier = uniqueTier('CUR');
    const outside = await createProvider(app, { lat: 10, lon: 10 });
    for (const query of [
      `tier=${tier}&starting_after=${outside.id}`,
      `lat=-10&lon=-10&ending_before=${outside.id}`,
      'starting_after=garbage',
    ]) {
      const res = await v3(app, `/providers?${query}`, { key: reseller.key });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
  });
});

describe('tenancy', () => {
  it('every providers endpoint answers 401 without a valid API key', async () => {
    const provider = await createProvider(app);
    const paths = [
      '/providers',
      `/providers/${provider.id}`,
      `/providers/${provider.id}/gym-copay-options`,
      '/passes/pass_01JZZZZZZZZZZZZZZZZZZZZZZZ/providers',
    ];
    for (const path of paths) {
      for (const key of [undefined, 'sk_wrong']) {
        const res = await v3(app, path, { key });
        expect(res.status).toBe(401);
        expect(res.body.error.type).toBe('authentication_error');
      }
    }
    const res = await gql(app, undefined, '{ providers { edges { node { id } } } }');
    expect(res.body.data?.providers ?? null).toBeNull();
    expect(res.body.errors?.length).toBeGreaterThan(0);
  });
});

describe('GraphQL providers', () => {
  const PROVIDERS = `query P($category: ProviderCategory, $tier: String, $near: NearInput, $first: Int) {
    providers(category: $category, tier: $tier, near: $near, first: $first) {
      edges { cursor node { id name category tier timezone distanceKm cancellationPolicy { freeCancellationHours lateCancellationRefundPercent } } }
      pageInfo { hasNextPage hasPreviousPage }
    }
  }`;

  it('filters by category and tier and searches near a point, like REST', async () => {
    const tier = uniqueTier('GQL');
    const at = { lat: 64.1466, lon: -21.9426 }; // Reykjavík
    const gym = await createProvider(app, { ...at, tier, timezone: 'Atlantic/Reykjavik' });
    const nearSpa = await createProvider(app, { lat: at.lat + 0.01, lon: at.lon, tier, category: 'SPA', timezone: 'Atlantic/Reykjavik' });
    const res = await gql(app, reseller.key, PROVIDERS, { tier: tier.toLowerCase(), near: { lat: at.lat, lon: at.lon, radiusKm: 5 } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.providers.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([gym.id, nearSpa.id]);
    expect(res.body.data.providers.edges[0]).toEqual({
      cursor: gym.id,
      node: {
        id: gym.id,
        name: 'Test Provider',
        category: 'GYM',
        tier,
        timezone: 'Atlantic/Reykjavik',
        distanceKm: 0,
        cancellationPolicy: { freeCancellationHours: 24, lateCancellationRefundPercent: 50 },
      },
    });
    expect(res.body.data.providers.edges[1].node.distanceKm).toBeCloseTo(1.112, 2);

    const spas = await gql(app, reseller.key, PROVIDERS, { tier, category: 'SPA' });
    expect(spas.body.data.providers.edges.map((e: { node: { id: string; distanceKm: null } }) => [e.node.id, e.node.distanceKm])).toEqual([
      [nearSpa.id, null],
    ]);
  });

  it('bad input › an InputError-coded top-level error naming the argument', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ near: { lat: 0, lon: 0, radiusKm: 0 } }, 'near.radiusKm'],
      [{ near: { lat: 0, lon: 0, radiusKm: 501 } }, 'near.radiusKm'],
      [{ near: { lat: 95, lon: 0 } }, 'near.lat'],
      [{ near: { lat: 0, lon: -181 } }, 'near.lon'],
      [{ tier: 'no spaces' }, 'tier'],
      [{ first: 101 }, 'first'],
    ];
    for (const [variables, param] of cases) {
      const res = await gql(app, reseller.key, PROVIDERS, variables);
      expect(res.body.data?.providers ?? null).toBeNull();
      expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param });
    }
    const unknownCategory = await gql(app, reseller.key, PROVIDERS, { category: 'POOL' });
    expect(unknownCategory.body.errors?.length).toBeGreaterThan(0);
  });

  it('provider(id) answers the provider, or null for an unknown id; node(id) resolves it', async () => {
    const provider = await createProvider(app, { timezone: 'America/Sao_Paulo' });
    const res = await gql(
      app,
      reseller.key,
      `query($id: ID!, $unknown: ID!) {
      provider(id: $id) { id timezone distanceKm }
      unknown: provider(id: $unknown) { id }
      node(id: $id) { __typename ... on Provider { id } }
    }`,
      { id: provider.id, unknown: 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ' },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toEqual({
      provider: { id: provider.id, timezone: 'America/Sao_Paulo', distanceKm: null },
      unknown: null,
      node: { __typename: 'Provider', id: provider.id },
    });
  });
});
