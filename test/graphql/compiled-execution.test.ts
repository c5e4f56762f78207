import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { call, gql } from '../support/http.ts';
import { operation } from './documents.ts';
import { isObjectType, type GraphQLResolveInfo } from 'graphql';
import { graphqlSchema } from '../../src/graphql/schema.ts';

// A document that comes back runs compiled by graphql-jit (src/graphql/compiled-execution.ts):
// it must answer exactly as graphql-js answered it the first time, and a string literal must
// never reach the compiler, which writes literals into the code it generates.

const app = useApp();
let reseller: TestReseller;
let passId: string;
let clientId: string;
beforeAll(async () => {
  reseller = await createReseller(app, { balance: 1_000_000 });
  passId = (await createPassPackage(app, reseller, { name: 'Gym and Spa' })).id;
  await createPassPackage(app, reseller, { name: 'Gym only' });
  clientId = (await issuePass(app, reseller, passId)).client_id;
});

/** GraphQL executions by engine so far, from GET /metrics. */
async function executions(): Promise<{ compiled: number; 'graphql-js': number }> {
  const text = (await call(app, '/metrics')).text;
  const count = (engine: string) =>
    Number(new RegExp(`^graphql_executions_total\\{engine="${engine}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { compiled: count('compiled'), 'graphql-js': count('graphql-js') };
}

/** Sends the same document three times: the first runs on graphql-js, the next two compiled. Answers the three replies and the engines counted. */
async function thrice(query: string, variables: Record<string, unknown> = {}, key?: () => string) {
  const before = await executions();
  const replies = [];
  for (let i = 0; i < 3; i++) replies.push(await gql(app, reseller.key, query, variables, key ? { idempotencyKey: key() } : {}));
  const after = await executions();
  return {
    replies: replies.map((r) => ({ status: r.status, body: r.body })),
    ran: { compiled: after.compiled - before.compiled, 'graphql-js': after['graphql-js'] - before['graphql-js'] },
  };
}

describe('a document sent again', () => {
  it('runs compiled from its second time, with the answer graphql-js gave: lists, fragments, aliases, interfaces', async () => {
    const { replies, ran } = await thrice(
      `query Both($first: Int!, $id: ID!, $client: ID!) {
      a: passes(first: $first) { edges { cursor node { ...PassParts } } pageInfo { hasNextPage endCursor } }
      b: passes(first: 1) { edges { node { id } } pageInfo { hasNextPage } }
      node(id: $id) { __typename id ... on Pass { name } }
      client(id: $client) { id firstName creditBalance credits { balance } }
      __typename
    }
    fragment PassParts on Pass { id name price currency paymentModel createdAt categories { type tiers visitsAllowed creditAllocated } }`,
      { first: 10, id: passId, client: clientId },
    );
    expect(replies[0].body.errors, JSON.stringify(replies[0].body)).toBeUndefined();
    expect(ran).toEqual({ compiled: 2, 'graphql-js': 1 });
    expect(replies[0].status).toBe(200);
    expect(replies[0].body.errors).toBeUndefined();
    expect(replies[0].body.data.a.edges).toHaveLength(2);
    expect(replies[0].body.data.node).toEqual({ __typename: 'Pass', id: passId, name: 'Gym and Spa' });
    expect(replies[1]).toEqual(replies[0]);
    expect(replies[2]).toEqual(replies[0]);
  });

  it('answers the same errors compiled: a bad cursor names its argument, a missing row is null', async () => {
    const { replies, ran } = await thrice('query($after: String) { passes(first: 2, after: $after) { edges { node { id } } } }', {
      after: 'not-a-cursor',
    });
    expect(ran.compiled).toBe(2);
    expect(replies[0].body.errors?.[0].extensions).toMatchObject({ code: 'invalid_cursor', param: 'after' });
    expect(replies[1]).toEqual(replies[0]);
    expect(replies[2]).toEqual(replies[0]);

    const missing = await thrice('query($id: ID!) { node(id: $id) { id } }', { id: 'pass_01J0000000000000000000000' });
    expect(missing.replies[0].body).toEqual({ data: { node: null } });
    expect(missing.replies[2]).toEqual(missing.replies[0]);
  });

  it('runs a mutation compiled in its transaction, error members included (the union resolves its member)', async () => {
    const clients = async () =>
      Number((await app.sql<{ n: string }>('select count(*) as n from client where reseller_id = ?', [reseller.id]))[0].n);
    const before = await clients();
    const bad = await thrice(operation('IssuePass'), { input: { passId, firstName: 'Ada', lastName: 'Lovelace', email: 'not-an-email' } });
    expect(bad.ran.compiled).toBe(2);
    expect(bad.replies[0].body.data.issuePass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'email' });
    expect(bad.replies[1]).toEqual(bad.replies[0]);
    expect(bad.replies[2]).toEqual(bad.replies[0]);
    expect(await clients()).toBe(before);

    let n = 0;
    const good = await thrice(
      operation('IssuePass'),
      { input: { passId, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' } },
      () => `compiled-${++n}`,
    );
    expect(good.ran.compiled).toBe(3); // the document the failures sent
    expect(good.replies.map((r) => r.body.data?.issuePass.__typename)).toEqual([
      'IssuedPassPayload',
      'IssuedPassPayload',
      'IssuedPassPayload',
    ]);
    expect(await clients()).toBe(before + 3);
    // A retry of the compiled one replays it byte for byte.
    const retry = await gql(
      app,
      reseller.key,
      operation('IssuePass'),
      { input: { passId, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' } },
      { idempotencyKey: 'compiled-3' },
    );
    expect(retry.headers.get('X-Idempotent-Replayed')).toBe('true');
    expect(retry.body).toEqual(good.replies[2].body);
    expect(await clients()).toBe(before + 3);
  });
});

describe('a document with two operations', () => {
  it('always runs on graphql-js: each request runs the operation it names, however often it came before', async () => {
    const document = `query Names { passes(first: 5) { edges { node { name } } } }
      query Ids { passes(first: 5) { edges { node { id } } } }`;
    const before = await executions();
    const send = async (operationName: string) =>
      (await call(app, '/graphql', { key: reseller.key, body: { query: document, operationName } })).body;
    const answers = [];
    for (const name of ['Names', 'Names', 'Names', 'Ids', 'Ids', 'Names']) answers.push(await send(name));
    const names = answers[0].data.passes.edges.map((e: { node: { name: string } }) => e.node.name).sort();
    expect(names).toEqual(['Gym and Spa', 'Gym only']);
    for (const [i, name] of ['Names', 'Names', 'Names', 'Ids', 'Ids', 'Names'].entries()) {
      expect(Object.keys(answers[i].data.passes.edges[0].node), `request ${i + 1}, ${name}`).toEqual([name === 'Names' ? 'name' : 'id']);
    }
    expect((await executions()).compiled).toBe(before.compiled);
  });
});

describe('a document with a string literal', () => {
  // graphql-jit turns a literal that starts with its Date marker into `new Date(<the rest>)` in the
  // code it compiles: compiled, this would run the assignment.
  const marker = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d';
  const injected = () => (globalThis as Record<string, unknown>).compiledLiteralRan;

  it('always runs on graphql-js, so the literal stays a value: a query and a mutation', async () => {
    const query = await thrice(
      `{ node(id: "${marker}globalThis.compiledLiteralRan=1") { id } passes(first: 1) { edges { node { id } } } }`,
    );
    expect(injected()).toBeUndefined();
    expect(query.ran).toEqual({ compiled: 0, 'graphql-js': 3 });
    expect(query.replies[0].body.data.node).toBeNull();
    expect(query.replies[2]).toEqual(query.replies[0]);

    const mutation = await thrice(`mutation { issuePass(input: { passId: "${passId}", firstName: "${marker}globalThis.compiledLiteralRan=2",
      lastName: "Lovelace", email: "not-an-email" }) { __typename ... on InputError { param } } }`);
    expect(injected()).toBeUndefined();
    expect(mutation.ran).toEqual({ compiled: 0, 'graphql-js': 3 });
    expect(mutation.replies[0].body.data.issuePass).toEqual({ __typename: 'InputError', param: 'email' });
    expect(mutation.replies[2]).toEqual(mutation.replies[0]);
  });
});

describe('node ids', () => {
  it('every Node type answers its id without a promise, as relay would encode it (src/graphql/schema.ts synchronousNodeIds)', () => {
    const nodeTypes = Object.values(graphqlSchema().getTypeMap()).filter(
      (t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'),
    );
    expect(nodeTypes.length).toBeGreaterThan(10);
    for (const type of nodeTypes) {
      if (!isObjectType(type)) continue;
      const id = type.getFields().id.resolve!({ id: 'x_01' }, {}, {}, {} as GraphQLResolveInfo);
      expect({ type: type.name, id }).toEqual({ type: type.name, id: 'x_01' });
    }
  });

  it('a list of nodes answers the ids it read, compiled or not', async () => {
    const { replies } = await thrice('{ passes(first: 2) { edges { node { id } } } }');
    const ids = replies[0].body.data.passes.edges.map((e: { node: { id: string } }) => e.node.id);
    expect(ids).toContain(passId);
    expect(replies[2]).toEqual(replies[0]);
  });
});
