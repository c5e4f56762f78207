import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';
import { pageBackward, pageForward } from './support.ts';

// Proximity paging is keyset on (distance, id): ties in distance must neither repeat nor lose an
// item at a page boundary. Around (0, 0) points at the same offset along the equator and the
// prime meridian, in either direction, are at exactly the same distance (the sphere's symmetry
// survives floating point there), so every ring below is a genuine tie.

const app = useApp({}, { now: new Date('2027-03-10T12:00:00Z') });
let reseller: TestReseller;
/** Provider ids in the order the list must show them: by ring (distance), then id. */
let expected: string[];
let ringOf: Map<string, number>;
let outside: string;

const ORIGIN = 'lat=0&lon=0&radius_km=50';

beforeAll(async () => {
  reseller = await createReseller(app);
  // [ring, lat, lon]; created in an order unrelated to distance, so ids do not follow the rings.
  const layout: [number, number, number][] = [
    [2, 0.2, 0],
    [0, 0, 0],
    [1, 0, 0.1],
    [3, 0, -0.3],
    [2, 0, 0.2],
    [1, -0.1, 0],
    [0, 0, 0],
    [2, 0.2, 0],
    [1, 0.1, 0],
    [2, -0.2, 0],
    [0, 0, 0],
    [3, 0.3, 0],
    [1, 0, -0.1],
    [2, 0, -0.2],
    [2, 0.2, 0],
    [3, 0, 0.3],
  ];
  ringOf = new Map();
  for (const [ring, lat, lon] of layout) {
    app.clock.advance(1);
    const p = await createProvider(app, { lat, lon, timezone: 'Africa/Accra', city: 'Gulf of Guinea' });
    ringOf.set(p.id, ring);
  }
  outside = (await createProvider(app, { lat: 0, lon: 0.5 })).id; // ≈ 55.7 km, beyond the radius
  expected = [...ringOf.keys()].sort((a, b) => ringOf.get(a)! - ringOf.get(b)! || (a < b ? -1 : 1));
});

describe('REST proximity paging with ties', () => {
  it('the first page is nearest first with distance_km, ties by id, and the radius excludes the farther one', async () => {
    const res = await v3(app, `/providers?${ORIGIN}&limit=100`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(expected);
    expect(res.body.data.map((p: { id: string }) => p.id)).not.toContain(outside);
    const byRing = new Map<number, Set<number>>();
    for (const p of res.body.data as { id: string; distance_km: number }[]) {
      const ring = ringOf.get(p.id)!;
      byRing.set(ring, (byRing.get(ring) ?? new Set()).add(p.distance_km));
    }
    // One distance per ring: the rings are real ties, and they grow outward (earthdistance: R = 6378.168 km).
    expect([...byRing.values()].map((s) => s.size)).toEqual([1, 1, 1, 1]);
    expect([...byRing.entries()].map(([ring, s]) => [ring, [...s][0]])).toEqual([
      [0, 0],
      [1, 11.132],
      [2, 22.264],
      [3, 33.396],
    ]);
    expect(res.body.has_more).toBe(false);
  });

  for (const limit of [1, 2, 3, 4, 5]) {
    it(`limit ${limit} › forward with starting_after and backward with ending_before visit every item once, in (distance, id) order`, async () => {
      const forward = await pageForward(app, reseller.key, `/providers?${ORIGIN}`, limit);
      expect(forward.ids).toEqual(expected);
      expect(forward.pages).toBe(Math.ceil(expected.length / limit));
      const backward = await pageBackward(app, reseller.key, `/providers?${ORIGIN}`, limit, expected.at(-1)!);
      expect(backward).toEqual(expected.slice(0, -1));
    });
  }

  it('has_more looks in the paging direction', async () => {
    const middle = expected[8];
    const after = await v3(app, `/providers?${ORIGIN}&limit=3&starting_after=${middle}`, { key: reseller.key });
    expect(after.body.data.map((p: { id: string }) => p.id)).toEqual(expected.slice(9, 12));
    expect(after.body.has_more).toBe(true);
    const before = await v3(app, `/providers?${ORIGIN}&limit=3&ending_before=${expected[3]}`, { key: reseller.key });
    expect(before.body.data.map((p: { id: string }) => p.id)).toEqual(expected.slice(0, 3));
    expect(before.body.has_more).toBe(false);
    const last = await v3(app, `/providers?${ORIGIN}&limit=3&starting_after=${expected.at(-4)}`, { key: reseller.key });
    expect(last.body.data.map((p: { id: string }) => p.id)).toEqual(expected.slice(-3));
    expect(last.body.has_more).toBe(false);
  });

  it('a provider outside the radius is not a cursor of this list › 400 invalid_cursor', async () => {
    const res = await v3(app, `/providers?${ORIGIN}&starting_after=${outside}`, { key: reseller.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });
});

describe('GraphQL proximity paging with ties', () => {
  const PAGE = `query P($first: Int, $after: String, $last: Int, $before: String) {
    providers(near: { lat: 0, lon: 0, radiusKm: 50 }, first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id distanceKm } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }`;
  type Conn = {
    edges: { cursor: string; node: { id: string; distanceKm: number } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  };

  for (const size of [2, 3, 5]) {
    it(`${size} at a time › first/after and last/before visit every item once, in (distance, id) order`, async () => {
      const forward: string[] = [];
      let after: string | null = null;
      for (let i = 0; i < 50; i++) {
        const res: Reply<{ data?: { providers: Conn }; errors?: unknown[] }> = await gql<{ providers: Conn }>(app, reseller.key, PAGE, {
          first: size,
          after,
        });
        expect(res.body.errors).toBeUndefined();
        const conn: Conn = res.body.data!.providers;
        forward.push(...conn.edges.map((e) => e.node.id));
        expect(conn.pageInfo.hasPreviousPage).toBe(after !== null);
        if (!conn.pageInfo.hasNextPage) break;
        after = conn.pageInfo.endCursor;
      }
      expect(forward).toEqual(expected);

      const backward: string[] = [];
      let before: string | null = null;
      for (let i = 0; i < 50; i++) {
        const res: Reply<{ data?: { providers: Conn }; errors?: unknown[] }> = await gql<{ providers: Conn }>(app, reseller.key, PAGE, {
          last: size,
          before,
        });
        expect(res.body.errors).toBeUndefined();
        const conn: Conn = res.body.data!.providers;
        backward.unshift(...conn.edges.map((e) => e.node.id));
        expect(conn.pageInfo.hasNextPage).toBe(before !== null);
        if (!conn.pageInfo.hasPreviousPage) break;
        before = conn.pageInfo.startCursor;
      }
      expect(backward).toEqual(expected);
    });
  }
});
