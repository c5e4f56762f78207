import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createClass, createClassCategory, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql } from '../support/http.ts';

// Provider.classes: each provider's classes newest first, paged per provider even when many
// providers are read in one batch.

const app = useApp({}, { now: new Date('2027-03-10T12:00:00Z') });
let reseller: TestReseller;

beforeAll(async () => {
  reseller = await createReseller(app);
});

const CLASSES = `query($ids: [ID!]!, $first: Int, $after: String, $last: Int, $before: String) {
  nodes(ids: $ids) { id ... on Provider { classes(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id provider { id } } } pageInfo { hasNextPage hasPreviousPage }
  } } }
}`;

type Conn = {
  edges: { cursor: string; node: { id: string; provider: { id: string } } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean };
};
const idsOf = (c: Conn) => c.edges.map((e) => e.node.id);

async function providersWithClasses(counts: number[]) {
  const category = await createClassCategory(app);
  const made: { provider: string; classes: string[] }[] = [];
  for (const count of counts) {
    const provider = await createProvider(app);
    const classes = [];
    for (let i = 0; i < count; i++) classes.push((await createClass(app, provider.id, category.id)).id);
    made.push({ provider: provider.id, classes: classes.reverse() });
  }
  return made;
}

describe('Provider.classes', () => {
  it('pages each provider separately, newest first', async () => {
    const [a, b, c] = await providersWithClasses([3, 1, 0]);
    const res = await gql(app, reseller.key, CLASSES, { ids: [a.provider, b.provider, c.provider], first: 2 });
    expect(res.body.errors).toBeUndefined();
    const [ca, cb, cc] = res.body.data.nodes.map((n: { classes: Conn }) => n.classes);
    expect(idsOf(ca)).toEqual(a.classes.slice(0, 2));
    expect(ca.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false });
    expect(ca.edges.every((e: Conn['edges'][number]) => e.node.provider.id === a.provider)).toBe(true);
    expect(idsOf(cb)).toEqual(b.classes);
    expect(cb.pageInfo.hasNextPage).toBe(false);
    expect(idsOf(cc)).toEqual([]);
  });

  it('after and before a class of that provider; last without a cursor takes the oldest', async () => {
    const [a] = await providersWithClasses([4]);
    const after = await gql(app, reseller.key, CLASSES, { ids: [a.provider], first: 2, after: a.classes[0] });
    expect(idsOf(after.body.data.nodes[0].classes)).toEqual(a.classes.slice(1, 3));
    expect(after.body.data.nodes[0].classes.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: true });
    const before = await gql(app, reseller.key, CLASSES, { ids: [a.provider], last: 2, before: a.classes[3] });
    expect(idsOf(before.body.data.nodes[0].classes)).toEqual(a.classes.slice(1, 3));
    expect(before.body.data.nodes[0].classes.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: true });
    const last = await gql(app, reseller.key, CLASSES, { ids: [a.provider], last: 3 });
    expect(idsOf(last.body.data.nodes[0].classes)).toEqual(a.classes.slice(1));
    expect(last.body.data.nodes[0].classes.pageInfo.hasPreviousPage).toBe(true);
  });

  it("a cursor of one provider's class is invalid_cursor on the other providers of the batch", async () => {
    const [a, b] = await providersWithClasses([2, 2]);
    const res = await gql(app, reseller.key, CLASSES, { ids: [a.provider, b.provider], first: 5, after: a.classes[0] });
    expect(res.body.data.nodes[0].classes.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([a.classes[1]]);
    expect(res.body.data.nodes[1]).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'invalid_cursor', param: 'after' });
    expect(res.body.errors?.[0]).toMatchObject({ path: ['nodes', 1, 'classes'] });
  });

  it.each([
    [{ first: 0 }, 'first'],
    [{ first: 101 }, 'first'],
    [{ first: 1, last: 1 }, 'last'],
  ])('%j › validation_error naming %s', async (args, param) => {
    const [a] = await providersWithClasses([1]);
    const res = await gql(app, reseller.key, CLASSES, { ids: [a.provider], ...args });
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param });
  });
});
