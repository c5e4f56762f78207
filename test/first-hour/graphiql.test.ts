import { parse, validate, type OperationDefinitionNode } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoSeed } from '../../src/db/seed.ts';
import { graphqlSchema } from '../../src/graphql/schema.ts';
import { GRAPHIQL_QUERY, GRAPHIQL_VARIABLES } from '../../src/graphql/yoga.ts';
import { useApp } from '../support/app.ts';
import { call } from '../support/http.ts';

// GraphiQL opens on one document with an operation per main flow (src/graphql/yoga.ts): each must
// validate, and each must run on the demo data with the Variables tab's content, ids filled in.

const app = useApp();
let demo: DemoSeed;
beforeAll(async () => {
  demo = (await seedDemo(app.orm.em.fork(), app.clock.now()))!;
});

const operations = parse(GRAPHIQL_QUERY).definitions as OperationDefinitionNode[];
const shownVariables = JSON.parse(GRAPHIQL_VARIABLES) as Record<string, unknown>;

/** Runs one operation of the document as GraphiQL does: the whole document, its name and the variables. */
async function run(operationName: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await call(app, '/graphql', {
    key: demo.resellers[0].api_key,
    body: { query: GRAPHIQL_QUERY, operationName, variables: { ...shownVariables, ...variables } },
    headers: { Accept: 'application/graphql-response+json', ...headers },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.errors, res.text).toBeUndefined();
  return res.body.data;
}

describe('the GraphiQL example document', () => {
  it('has one named query or mutation per main flow, and validates against the schema', () => {
    expect(operations.map((o) => `${o.operation} ${o.name?.value}`)).toEqual([
      'query Passes',
      'mutation IssuePass',
      'query IssuedPass',
      'query ProvidersNear',
      'query Classes',
      'query SpaAvailability',
    ]);
    expect(validate(graphqlSchema(), parse(GRAPHIQL_QUERY)).map((e) => e.message)).toEqual([]);
    // The issue flow shows how a union result is read, errors included.
    expect(GRAPHIQL_QUERY).toContain('... on Error { code message }');
    expect(GRAPHIQL_QUERY).toContain('... on InputError { param }');
  });

  it('is what the GraphiQL page opens with, the variables beside it', async () => {
    const page = await call(app, '/graphql', { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('query SpaAvailability');
    expect(page.text).toContain('a SPA provider id from ProvidersNear');
  });

  it('runs every flow on the demo data in the order it is written', async () => {
    const passes = await run('Passes');
    expect(passes.passes.edges.map((e: { node: { id: string } }) => e.node.id).sort()).toEqual(
      demo.resellers[0].passes.map((p) => p.id).sort(),
    );

    const issued = await run('IssuePass', { passId: passes.passes.edges[0].node.id }, { 'Idempotency-Key': 'graphiql-example-1' });
    expect(issued.issuePass.__typename).toBe('IssuedPassPayload');
    const clientId = issued.issuePass.issuedPass.client.id;

    const readBack = await run('IssuedPass', { clientId });
    expect(readBack.issuedPass).toMatchObject({ id: issued.issuePass.issuedPass.id, client: { id: clientId, email: 'ada@example.com' } });

    // The shown variables ask for spas (category "SPA"); the point defaults to central Berlin.
    const near = await run('ProvidersNear');
    const spas = near.providers.edges.map((e: { node: unknown }) => e.node) as {
      id: string;
      category: string;
      city: string;
      services: { edges: { node: { id: string; name: string } }[] };
    }[];
    expect(spas.length).toBeGreaterThan(0);
    expect(spas.every((p) => p.category === 'SPA' && p.city === 'Berlin')).toBe(true);

    const classes = await run('Classes');
    expect(classes.classes.edges.length).toBeGreaterThan(0);
    expect(classes.classes.edges.every((e: { node: { category: { name: string } } }) => e.node.category.name === 'Yoga')).toBe(true);

    const service = spas[0].services.edges[0].node;
    const date = new Date(app.clock.now().getTime() + 2 * 86_400_000).toISOString().slice(0, 10);
    const availability = await run('SpaAvailability', { spaId: spas[0].id, serviceIds: [service.id], date });
    expect(availability.spaAvailability).toMatchObject({ timezone: 'Europe/Berlin', services: [{ name: service.name }] });
  });

  it('the mutation with the placeholder pass id answers with the error fragments, not a failure', async () => {
    const res = await call(app, '/graphql', {
      key: demo.resellers[0].api_key,
      body: { query: GRAPHIQL_QUERY, operationName: 'IssuePass', variables: shownVariables },
      headers: { Accept: 'application/graphql-response+json', 'Idempotency-Key': 'graphiql-example-3' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.issuePass).toMatchObject({
      __typename: expect.stringMatching(/Error$/),
      code: expect.any(String),
      message: expect.any(String),
    });
  });
});
