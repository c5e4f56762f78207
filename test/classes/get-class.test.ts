import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createClass, createClassCategory, createClassInstance, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// GET /classes/{id} and Query.class / Class.instances: upcoming SCHEDULED instances only
// (starting after the clock's now), soonest first, with local date and time and spots left.

const app = useApp();
let reseller: TestReseller;
const NOW = new Date('2027-06-01T08:00:00Z');

beforeAll(async () => {
  reseller = await createReseller(app);
});

async function classWithInstances() {
  app.clock.set(NOW);
  const category = await createClassCategory(app, { name: `Yoga ${Math.random().toString(36).slice(2, 8)}` });
  const studio = await createProvider(app, { name: 'Lisbon Flow', tier: 'GOLD', timezone: 'Europe/Lisbon' });
  const yoga = await createClass(app, studio.id, category.id, { name: 'Sunrise Yoga', durationMinutes: 75 });
  const tz = { timezone: 'Europe/Lisbon' };
  // Lisbon is UTC+1 in June.
  const past = await createClassInstance(app, yoga.id, new Date('2027-05-31T06:00:00Z'), tz);
  const startingNow = await createClassInstance(app, yoga.id, NOW, tz);
  const later = await createClassInstance(app, yoga.id, new Date('2027-06-03T06:00:00Z'), { ...tz, capacity: 12, spotsTaken: 12 });
  const cancelled = await createClassInstance(app, yoga.id, new Date('2027-06-02T06:00:00Z'), { ...tz, status: 'CANCELLED' });
  const soon = await createClassInstance(app, yoga.id, new Date('2027-06-01T23:15:00Z'), { ...tz, capacity: 10, spotsTaken: 3 });
  return { category, studio, yoga, past, startingNow, later, cancelled, soon };
}

describe('GET /classes/{id}', () => {
  it('answers the class with its upcoming scheduled instances, soonest first, local date/time and spots remaining', async () => {
    const { category, studio, yoga, later, soon } = await classWithInstances();
    const res = await v3(app, `/classes/${yoga.id}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'class',
      id: yoga.id,
      name: 'Sunrise Yoga',
      description: 'A class for tests',
      category: category.name,
      provider_id: studio.id,
      provider_name: 'Lisbon Flow',
      tier: 'GOLD',
      duration_minutes: 75,
      instances: [
        // 23:15 UTC is 00:15 the next day in Lisbon.
        {
          object: 'class_instance',
          id: soon.id,
          starts_at: Date.parse('2027-06-01T23:15:00Z') / 1000,
          date: '2027-06-02',
          time: '00:15',
          capacity: 10,
          spots_remaining: 7,
          status: 'SCHEDULED',
        },
        {
          object: 'class_instance',
          id: later.id,
          starts_at: Date.parse('2027-06-03T06:00:00Z') / 1000,
          date: '2027-06-03',
          time: '07:00',
          capacity: 12,
          spots_remaining: 0,
          status: 'SCHEDULED',
        },
      ],
    });
  });

  it('as the clock moves, an instance that has started drops out', async () => {
    const { yoga, later, soon } = await classWithInstances();
    app.clock.set(new Date('2027-06-01T23:15:00Z'));
    const atStart = await v3(app, `/classes/${yoga.id}`, { key: reseller.key });
    expect(atStart.body.instances.map((i: { id: string }) => i.id)).toEqual([later.id]);
    app.clock.set(new Date('2027-06-01T23:14:59Z'));
    const justBefore = await v3(app, `/classes/${yoga.id}`, { key: reseller.key });
    expect(justBefore.body.instances.map((i: { id: string }) => i.id)).toEqual([soon.id, later.id]);
    app.clock.set(new Date('2027-07-01T00:00:00Z'));
    expect((await v3(app, `/classes/${yoga.id}`, { key: reseller.key })).body.instances).toEqual([]);
  });

  it('shows at most the next 50 instances', async () => {
    app.clock.set(NOW);
    const gym = await createProvider(app);
    const busy = await createClass(app, gym.id, (await createClassCategory(app)).id);
    const starts = Array.from({ length: 55 }, (_, i) => new Date(NOW.getTime() + (55 - i) * 3_600_000));
    const made = [];
    for (const at of starts) made.push(await createClassInstance(app, busy.id, at));
    const soonestFirst = made.reverse().map((i) => i.id);
    const res = await v3(app, `/classes/${busy.id}`, { key: reseller.key });
    expect(res.body.instances.map((i: { id: string }) => i.id)).toEqual(soonestFirst.slice(0, 50));
  });

  it.each([
    ['an unknown well-formed id', 'class_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ['a malformed id', 'yoga'],
    ['an id of another kind', 'prov_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
  ])('%s › 404 resource_not_found', async (_, id) => {
    const res = await v3(app, `/classes/${id}`, { key: reseller.key });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
  });

  it('a query parameter it does not take › 400 validation_error', async () => {
    const { yoga } = await classWithInstances();
    const res = await v3(app, `/classes/${yoga.id}?limit=5`, { key: reseller.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'limit' });
  });

  it('without an API key › 401 invalid_api_key, even for a real class', async () => {
    const { yoga } = await classWithInstances();
    const res = await v3(app, `/classes/${yoga.id}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'invalid_api_key' });
  });
});

describe('Query.class and Class.instances', () => {
  const CLASS = `query C($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    class(id: $id) {
      id name durationMinutes
      provider { id name timezone }
      category { id name }
      instances(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { id startsAt date time capacity spotsRemaining status class { id } } }
        pageInfo { hasNextPage hasPreviousPage endCursor }
      }
    }
  }`;

  it('answers the class, its provider, category and upcoming instances, paged', async () => {
    const { category, studio, yoga, later, soon } = await classWithInstances();
    const res = await gql(app, reseller.key, CLASS, { id: yoga.id, first: 1 });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.class).toEqual({
      id: yoga.id,
      name: 'Sunrise Yoga',
      durationMinutes: 75,
      provider: { id: studio.id, name: 'Lisbon Flow', timezone: 'Europe/Lisbon' },
      category: { id: category.id, name: category.name },
      instances: {
        edges: [
          {
            cursor: soon.id,
            node: {
              id: soon.id,
              startsAt: '2027-06-01T23:15:00Z',
              date: '2027-06-02',
              time: '00:15',
              capacity: 10,
              spotsRemaining: 7,
              status: 'SCHEDULED',
              class: { id: yoga.id },
            },
          },
        ],
        pageInfo: { hasNextPage: true, hasPreviousPage: false, endCursor: soon.id },
      },
    });
    const next = await gql(app, reseller.key, CLASS, { id: yoga.id, first: 5, after: soon.id });
    expect(next.body.data.class.instances.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([later.id]);
    expect(next.body.data.class.instances.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, endCursor: later.id });
    const back = await gql(app, reseller.key, CLASS, { id: yoga.id, last: 1, before: later.id });
    expect(back.body.data.class.instances.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([soon.id]);
    const tail = await gql(app, reseller.key, CLASS, { id: yoga.id, last: 1 });
    expect(tail.body.data.class.instances.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([later.id]);
  });

  it('an instance of another class is not a cursor of these instances › invalid_cursor', async () => {
    const first = await classWithInstances();
    const second = await classWithInstances();
    const res = await gql(app, reseller.key, CLASS, { id: first.yoga.id, after: second.soon.id });
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'invalid_cursor', param: 'after' });
  });

  it('every class and instance is a node; unknown ids answer null', async () => {
    const { yoga, soon, past } = await classWithInstances();
    const res = await gql(
      app,
      reseller.key,
      `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on ClassInstance { status class { name } } ... on Class { name } } }`,
      { ids: [yoga.id, soon.id, past.id, 'class_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'ci_01ARZ3NDEKTSV4RRFFQ69G5FAV'] },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.nodes).toEqual([
      { __typename: 'Class', id: yoga.id, name: 'Sunrise Yoga' },
      { __typename: 'ClassInstance', id: soon.id, status: 'SCHEDULED', class: { name: 'Sunrise Yoga' } },
      { __typename: 'ClassInstance', id: past.id, status: 'SCHEDULED', class: { name: 'Sunrise Yoga' } },
      null,
      null,
    ]);
    const missing = await gql(app, reseller.key, CLASS, { id: 'class_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(missing.body).toEqual({ data: { class: null } });
  });

  it('without an API key › refused, nothing read', async () => {
    const { yoga } = await classWithInstances();
    const res = await gql(app, undefined, CLASS, { id: yoga.id });
    expect(res.status).toBe(401);
    expect(res.body.data ?? null).toBeNull();
  });
});
