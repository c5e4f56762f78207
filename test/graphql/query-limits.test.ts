import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { queryLimits } from '../../src/graphql/builder.ts';
import { queryCostLimits } from '../../src/graphql/limits.ts';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';
import { gql } from '../support/http.ts';

// decisions §14: depth ≤ 12 and a cost where each connection multiplies by first/last; a
// rejected document is a validation error (400, no `data`), so no resolver runs.

const app = useApp();

const PAGE_FIELDS =
  'edges { node { id name description price currency duration paymentModel providerCount createdAt categories { type tiers visitsAllowed creditAllocated } } }';
// Nested connections multiply: providers × classes × instances at n = 10 costs ~3,000; at n = 100
// it would be millions of selections, refused before anything runs.
const PAGE = `query Page($n: Int) {
  passes(first: $n) { edges { node { id } } }
  providers(first: $n) { edges { node { id classes(first: $n) { edges { node { id instances(first: $n) { edges { node { id startsAt } } } } } } } } }
}`;

describe('cost', () => {
  it('one full page of 100 passes with every field › is within the cost limit', async () => {
    const reseller = await createReseller(app);
    await createPassPackage(app, reseller);
    const res = await gql(app, reseller.key, `query { passes(first: 100) { ${PAGE_FIELDS} pageInfo { hasNextPage endCursor } } }`);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.passes.edges).toHaveLength(1);
  });

  it('a connection multiplies its selection by `first` › the same document runs for 10 and is refused for 100', async () => {
    const reseller = await createReseller(app);
    await createPassPackage(app, reseller);
    const small = await gql(app, reseller.key, PAGE, { n: 10 });
    expect(small.status).toBe(200);
    expect(small.body.data.passes.edges).toHaveLength(1);

    // Validation results depend on the variables: a cached pass for n = 10 must not let n = 100 through.
    const large = await gql(app, reseller.key, PAGE, { n: 100 });
    expect(large.status).toBe(400);
    expect(large.body.data).toBeUndefined();
    expect(large.body.errors).toHaveLength(1);
    expect(large.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', limit: 'complexity', max: queryLimits.complexity });
    expect(large.body.errors?.[0].extensions?.actual).toBeGreaterThan(queryLimits.complexity);

    expect((await gql(app, reseller.key, PAGE, { n: 10 })).status).toBe(200);
  });

  it('a page of 100 thin edges is within the limit (edges are not counted again as a list)', async () => {
    const reseller = await createReseller(app);
    const res = await gql(app, reseller.key, '{ passes(first: 100) { edges { cursor node { id name price } } pageInfo { hasNextPage } } }');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { passes: { edges: [], pageInfo: { hasNextPage: false } } } });
  });

  it('nodes(ids:) costs one selection per id › 3 ids run, 15000 are refused', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    // Four selections per id: 15,000 ids (a ~0.5 MB body) cost ~60,000, over the limit.
    const query = 'query Nodes($ids: [ID!]!) { nodes(ids: $ids) { id a: id b: id c: id } }';
    const few = await gql(app, reseller.key, query, { ids: [pass.id, pass.id, pass.id] });
    const node = { id: pass.id, a: pass.id, b: pass.id, c: pass.id };
    expect(few.body).toEqual({ data: { nodes: [node, node, node] } });
    const many = await gql(app, reseller.key, query, { ids: Array.from({ length: 15_000 }, () => pass.id) });
    expect(many.status).toBe(400);
    expect(many.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', limit: 'complexity' });
  });

  it('a mutation selecting more than 200 fields › refused before it runs: no client is created', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const query = `mutation Wide($input: IssuePassInput!) {
      issuePass(input: $input) { ... on IssuedPassPayload { issuedPass { ${'id '.repeat(queryLimits.breadth)} } } }
    }`;
    const res = await gql(app, reseller.key, query, { input: { passId: pass.id, firstName: 'A', lastName: 'B', email: 'a@example.com' } });
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', limit: 'breadth', max: queryLimits.breadth });
    expect(await app.sql('select id from client where reseller_id = ?', [reseller.id])).toEqual([]);
  });
});

describe('depth', () => {
  // Our schema has no cycles, so no query on it reaches depth 13 (introspection fields are not
  // counted: GraphiQL's own introspection query is 15 deep). The plugin is checked on a schema
  // that does nest without end, with a resolver that counts its calls.
  function personYoga() {
    const calls = { me: 0 };
    const schema = createSchema({
      typeDefs: 'type Query { me: Person } type Person { name: String friend: Person }',
      resolvers: {
        Query: {
          me: () => {
            calls.me += 1;
            return {};
          },
        },
        Person: { name: () => 'Ada', friend: () => ({}) },
      },
    });
    const yoga = createYoga({ schema, plugins: [queryCostLimits()], logging: false });
    const ask = async (depth: number) => {
      const query = `{ me { ${'friend { '.repeat(depth - 2)}name${' }'.repeat(depth - 2)} } }`;
      const res = await yoga.fetch('http://gateway/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
      });
      return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] } };
    };
    return { calls, ask };
  }

  it(`a query ${queryLimits.depth} deep › runs`, async () => {
    const { calls, ask } = personYoga();
    const res = await ask(queryLimits.depth);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(calls.me).toBe(1);
  });

  it(`a query ${queryLimits.depth + 1} deep › refused, and no resolver runs`, async () => {
    const { calls, ask } = personYoga();
    const res = await ask(queryLimits.depth + 1);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0].extensions).toMatchObject({
      code: 'validation_error',
      limit: 'depth',
      max: queryLimits.depth,
      actual: queryLimits.depth + 1,
    });
    expect(calls.me).toBe(0);
  });
});
