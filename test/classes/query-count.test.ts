import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createClass, createClassCategory, createClassInstance, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';

// No N+1: a page of providers with their classes and each class's next instances costs the same
// number of SQL statements for 25, 50 and 100 providers (every per-parent connection and parent
// reference is one batched statement). The database of this file holds only what it creates.

const NOW = new Date('2027-04-01T08:00:00Z');
const app = useApp({}, { now: NOW });
let reseller: TestReseller;
let categories: { id: string; name: string }[];

beforeAll(async () => {
  reseller = await createReseller(app);
  categories = [await createClassCategory(app), await createClassCategory(app)];
});

/** Providers near (48, 2), each with 2 classes of 4 upcoming instances (one more than asked for) and a past one. */
async function addProviders(count: number) {
  for (let i = 0; i < count; i++) {
    const provider = await createProvider(app, { lat: 48 + i / 1000, lon: 2, timezone: 'Europe/Paris' });
    for (const category of categories) {
      const cls = await createClass(app, provider.id, category.id);
      await createClassInstance(app, cls.id, new Date(NOW.getTime() - 3_600_000), { timezone: 'Europe/Paris' });
      for (let h = 1; h <= 4; h++)
        await createClassInstance(app, cls.id, new Date(NOW.getTime() + h * 86_400_000), { timezone: 'Europe/Paris', spotsTaken: h });
    }
  }
}

/** Statements the app sends for one request (their text shortened, to explain a failure). */
async function statementsOf<T>(request: () => Promise<T>): Promise<{ sql: string[]; reply: T }> {
  const queries = app.queries!;
  queries.reset();
  const reply = await request();
  // The API-key lookup runs only when the process's key cache (500 ms) has expired: not the
  // request's own cost, and timing-dependent, so it is left out of the count.
  const own = queries.statements.filter((q) => !/from api_key k join reseller r/.test(q));
  return { sql: own.map((q) => q.replace(/\s+/g, ' ').slice(0, 100)), reply };
}

// A partner's "near me" screen: 100 providers × 5 classes × 3 next instances (cost ≈ 11,400,
// within the limit in src/graphql/builder.ts).
const PROVIDERS_WITH_CLASSES = `{
  providers(first: 100) { edges { node { id classes(first: 5) { edges { node { id name category { name } instances(first: 3) { edges { node { id startsAt spotsRemaining } } } } } } } } }
}`;

interface Measured {
  providers: number;
  sql: string[];
  reply: Reply;
}
const measured: Record<'graphql' | 'classes' | 'rest' | 'restNear', Measured[]> = { graphql: [], classes: [], rest: [], restNear: [] };

async function measure(providers: number) {
  const run = async (name: keyof typeof measured, request: () => Promise<Reply>) => {
    const { sql, reply } = await statementsOf(request);
    measured[name].push({ providers, sql, reply });
  };
  await run('graphql', () => gql(app, reseller.key, PROVIDERS_WITH_CLASSES));
  await run('classes', () =>
    gql(
      app,
      reseller.key,
      `{
    classes(first: 100, near: { lat: 48, lon: 2, radiusKm: 100 }) { edges { node { id distanceKm provider { name timezone } category { name } instances(first: 3) { edges { node { date time class { id } } } } } } }
  }`,
    ),
  );
  await run('rest', () => v3(app, '/classes?limit=100', { key: reseller.key }));
  await run('restNear', () =>
    v3(app, `/classes?limit=100&lat=48&lon=2&category=${encodeURIComponent(categories[0].name)}`, { key: reseller.key }),
  );
}

const statements = (name: keyof typeof measured) => measured[name].map((m) => m.sql.length);

/** One count for every size; the message lists the statements of each run. */
function expectConstant(name: keyof typeof measured, atMost: number) {
  const why = measured[name].map((m) => `${m.providers} providers:\n  ${m.sql.join('\n  ')}`).join('\n');
  expect(new Set(statements(name)).size, why).toBe(1);
  expect(statements(name)[0], why).toBeLessThanOrEqual(atMost);
}

describe('statements per request do not grow with the page', () => {
  beforeAll(async () => {
    await addProviders(25);
    await measure(25);
    await addProviders(25);
    await measure(50);
    await addProviders(50);
    await measure(100);
  }, 120_000);

  it('providers(first: 100) › classes(first: 5) › instances(first: 3) › the same few statements at 25, 50 and 100 providers', () => {
    for (const { providers, reply } of measured.graphql) {
      expect(reply.body.errors).toBeUndefined();
      const edges = reply.body.data.providers.edges as {
        node: {
          classes: {
            edges: {
              node: { category: { name: string }; instances: { edges: { node: { startsAt: string; spotsRemaining: number } }[] } };
            }[];
          };
        };
      }[];
      expect(edges).toHaveLength(providers);
      for (const { node } of edges) {
        expect(node.classes.edges).toHaveLength(2);
        for (const { node: cls } of node.classes.edges) {
          expect(categories.map((c) => c.name)).toContain(cls.category.name);
          // The next three of four upcoming instances, soonest first; the past one is not among them.
          expect(cls.instances.edges.map((e) => [e.node.startsAt, e.node.spotsRemaining])).toEqual(
            [1, 2, 3].map((h) => [new Date(NOW.getTime() + h * 86_400_000).toISOString().replace('.000Z', 'Z'), 20 - h]),
          );
        }
      }
    }
    // The API key, the providers page, their classes, the classes' categories, their instances.
    expectConstant('graphql', 5);
  });

  it('classes(first: 100, near:) with provider, category and instances › constant', () => {
    for (const { providers, reply } of measured.classes) {
      expect(reply.body.errors).toBeUndefined();
      expect(reply.body.data.classes.edges).toHaveLength(Math.min(100, providers * 2));
    }
    // The API key, the proximity page, providers, categories, instances (classes are primed, not
    // re-read); the proximity page runs in its own transaction with its planner setting (begin,
    // set, set back, commit: geo.ts).
    expectConstant('classes', 9);
  });

  it('GET /classes?limit=100, newest first and nearest first › constant', () => {
    for (const { providers, reply } of measured.rest) expect(reply.body.data).toHaveLength(Math.min(100, providers * 2));
    for (const { providers, reply } of measured.restNear) expect(reply.body.data).toHaveLength(Math.min(100, providers));
    // The API key, the page, its providers, its categories; near adds the category-name lookup and
    // the proximity page's transaction for its planner setting (begin, set, set back, commit).
    expectConstant('rest', 4);
    expectConstant('restNear', 9);
  });
});
