import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { catalogueSettled, createClass, createClassCategory, createClassInstance, createProvider } from '../support/catalog.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';
import { OURS as MY_BOOKINGS } from '../../bench/frontend-query/documents.ts';

// The query a partner frontend's "my bookings" screen sends (bench/frontend-query/documents.ts, the
// document bench/README.md "Frontend query" measures at load): the client, a page of its bookings with each booking's
// provider, and its pass with its categories, in one request. Its SQL statements must not grow
// with the page: every booking's provider comes from one batched statement (src/graphql/loaders.ts).

const NOW = new Date('2027-05-03T08:00:00Z');
const app = useApp({}, { now: NOW });

interface Answer {
  client: {
    id: string;
    firstName: string;
    bookings: {
      edges: { node: { id: string; status: string; type: string; provider: { id: string; name: string; city: string } } }[];
      pageInfo: { hasNextPage: boolean };
    };
  };
  issuedPass: {
    id: string;
    status: string;
    categories: { type: string; tiers: string[]; visitsAllowed: number | null; visitsUsed: number }[];
    pass: { id: string; name: string };
  };
}

const GYMS = 4;
const INSTANCES_PER_GYM = 13; // 52 bookings: more than the largest page asked for
let reseller: TestReseller;
let passId: string;
let client: { id: string; issuedPassId: string };
let other: { id: string };
/** The client's bookings, newest first (the connection's order), with their provider's id. */
const bookings: { id: string; providerId: string }[] = [];
const gymNames = new Map<string, string>();

beforeAll(async () => {
  reseller = await createReseller(app, { balance: 1_000_000 });
  // Unlimited gym visits, so one client can hold 52 bookings; the spa category gives the pass a second one.
  const pass = await createPassPackage(app, reseller, {
    name: 'Frontend Pass',
    categories: [
      { type: 'GYM', tiers: ['SILVER', 'GOLD'], visits_allowed: null, credit_allocated: 0 },
      { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 50 },
    ],
  });
  passId = pass.id;
  const issued = await issuePass(app, reseller, pass.id, { first_name: 'Ada', email: 'ada@example.com' });
  client = { id: issued.client_id, issuedPassId: issued.id };
  other = { id: (await issuePass(app, reseller, pass.id, { first_name: 'Grace', email: 'grace@example.com' })).client_id };
  const category = await createClassCategory(app, { name: 'Frontend Yoga' });
  const classes: { gymId: string; classId: string }[] = [];
  for (let g = 0; g < GYMS; g++) {
    const name = `Gym ${g + 1}`;
    const gym = await createProvider(app, { category: 'GYM', tier: g % 2 ? 'GOLD' : 'SILVER', name, city: `City ${g + 1}` });
    gymNames.set(gym.id, name);
    classes.push({ gymId: gym.id, classId: (await createClass(app, gym.id, category.id)).id });
  }
  // Booked gym after gym, so any page of four or more holds every gym.
  for (let i = 1; i <= INSTANCES_PER_GYM; i++) {
    for (const [g, { gymId, classId }] of classes.entries()) {
      const instance = await createClassInstance(app, classId, new Date(NOW.getTime() + (i * GYMS + g) * 3_600_000));
      const res = await v3(app, '/bookings/class', { key: reseller.key, body: { class_instance_id: instance.id, client_id: client.id } });
      expect(res.status, res.text).toBe(201);
      bookings.unshift({ id: res.body.booking_id, providerId: gymId });
      // Another client of the same reseller at the same class: never on the first client's screen.
      if (i === INSTANCES_PER_GYM) {
        const foreign = await v3(app, '/bookings/class', {
          key: reseller.key,
          body: { class_instance_id: instance.id, client_id: other.id },
        });
        expect(foreign.status, foreign.text).toBe(201);
      }
    }
  }
}, 120_000);

/** The reply and the SQL statements the app sent for it, the API key's cached look-up left out (src/platform/auth.ts). */
async function counted(first: number): Promise<{ reply: Reply<{ data?: Answer; errors?: unknown[] }>; sql: string[] }> {
  app.queries!.reset();
  const reply = await gql<Answer>(app, reseller.key, MY_BOOKINGS, { clientId: client.id, first });
  return { reply, sql: app.queries!.ownStatements.map((s) => s.replace(/\s+/g, ' ').slice(0, 120)) };
}

describe('the frontend "my bookings" query', () => {
  const runs: { first: number; sql: string[] }[] = [];
  const answers = new Map<number, Answer>();

  beforeAll(async () => {
    // Every provider's creation heard, so the warm-up's providers stay kept (src/platform/catalogue-cache.ts).
    await catalogueSettled(app);
    await counted(10); // warm: prepared plans and caches are not the request's own cost
    for (const first of [1, 10, 50]) {
      const { reply, sql } = await counted(first);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.errors, reply.text).toBeUndefined();
      runs.push({ first, sql });
      answers.set(first, reply.body.data!);
    }
  });

  it('answers the page asked for: the newest bookings first, each with its provider named', () => {
    for (const first of [1, 10, 50]) {
      const { client: c } = answers.get(first)!;
      expect(c).toMatchObject({ id: client.id, firstName: 'Ada' });
      expect(c.bookings.edges.map((e) => e.node.id)).toEqual(bookings.slice(0, first).map((b) => b.id));
      expect(c.bookings.pageInfo.hasNextPage).toBe(true);
      for (const { node } of c.bookings.edges) {
        const expected = bookings.find((b) => b.id === node.id)!;
        expect(node).toMatchObject({ status: 'PENDING', type: 'CLASS' });
        expect(node.provider).toMatchObject({ id: expected.providerId, name: gymNames.get(expected.providerId) });
      }
    }
    // Ten bookings span the four gyms: the providers really are several.
    const ten = answers.get(10)!.client.bookings.edges;
    expect(ten).toHaveLength(10);
    expect(new Set(ten.map((e) => e.node.provider.name)).size).toBe(GYMS);
  });

  it("answers the client's pass with its categories and its visits used", () => {
    const { issuedPass } = answers.get(10)!;
    expect(issuedPass).toMatchObject({ id: client.issuedPassId, status: 'ACTIVE', pass: { id: passId, name: 'Frontend Pass' } });
    expect(issuedPass.categories).toEqual([
      expect.objectContaining({ type: 'GYM', tiers: ['SILVER', 'GOLD'], visitsAllowed: null }),
      expect.objectContaining({ type: 'SPA', tiers: ['SILVER'], visitsAllowed: null, creditAllocated: 50 }),
    ]);
  });

  it('costs the same SQL statements for first: 1, 10 and 50 (no statement per booking or per provider)', () => {
    const why = runs.map((r) => `first: ${r.first}:\n  ${r.sql.join('\n  ')}`).join('\n');
    expect(
      runs.map((r) => r.sql.length),
      why,
    ).toEqual(runs.map(() => runs[0].sql.length));
    // client(id:) with its bookings page, in one statement (src/graphql/read-along.ts);
    // issuedPass(clientId:): the client checked, with its current pass and the package, in one.
    // Their providers, read by the warm-up, are kept by the process (src/platform/catalogue-cache.ts): no statement.
    expect(runs[0].sql.length, why).toBe(2);
  });
});
