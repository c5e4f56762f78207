import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, type TestReseller } from '../support/factories.ts';
import { gql } from '../support/http.ts';
import { operation } from './documents.ts';
import type {
  ClientQuery,
  ClientQueryVariables,
  IssuePassMutation,
  IssuePassMutationVariables,
  IssuedPassQuery,
  IssuedPassQueryVariables,
  NodeQuery,
  NodeQueryVariables,
  PassesQuery,
  PassesQueryVariables,
} from './generated.ts';

// The operations of passes.graphql, sent as written and read through the types codegen made of them.

const app = useApp();

async function send<Result, Variables extends Record<string, unknown>>(
  reseller: TestReseller,
  name: string,
  variables: Variables,
): Promise<Result> {
  const res = await gql<Result>(app, reseller.key, operation(name), variables);
  expect(res.body.errors, `${name} answered top-level errors`).toBeUndefined();
  expect(res.status).toBe(200);
  return res.body.data as Result;
}

const issue = (reseller: TestReseller, input: IssuePassMutationVariables['input']) =>
  send<IssuePassMutation, IssuePassMutationVariables>(reseller, 'IssuePass', { input });

function issued(result: IssuePassMutation) {
  if (result.issuePass.__typename !== 'IssuedPassPayload') throw new Error(`expected a payload, got ${JSON.stringify(result.issuePass)}`);
  return result.issuePass.issuedPass;
}

describe('IssuePass › then IssuedPass, Client and Node', () => {
  it('issues a pass › and every query finds the same pass and client', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { name: 'Gym and Spa' });
    const ipass = issued(
      await issue(reseller, { passId: pass.id, firstName: 'Grace', lastName: 'Hopper', email: 'Grace@Example.com', externalId: 'crm-7' }),
    );

    expect(ipass.id).toMatch(/^ipass_/);
    expect(ipass.passcode).toMatch(/^[A-Z0-9]{8}$/);
    expect(ipass).toMatchObject({ status: 'ACTIVE', paymentModel: 'PAYG', pass: { id: pass.id, name: 'Gym and Spa' } });
    expect(ipass.client).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', creditBalance: 50 });
    expect(ipass.categories).toEqual([
      { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visitsAllowed: 8, visitsUsed: 0, creditAllocated: 0 },
      { type: 'SPA', tiers: ['SILVER'], visitsAllowed: null, visitsUsed: 0, creditAllocated: 50 },
    ]);
    expect(new Date(ipass.expiresAt).getTime()).toBeGreaterThan(new Date(ipass.createdAt).getTime());

    const byClient = await send<IssuedPassQuery, IssuedPassQueryVariables>(reseller, 'IssuedPass', { clientId: ipass.client.id });
    expect(byClient.issuedPass).toEqual(ipass);

    const client = await send<ClientQuery, ClientQueryVariables>(reseller, 'Client', { id: ipass.client.id });
    expect(client.client).toMatchObject({
      id: ipass.client.id,
      email: 'grace@example.com',
      externalId: 'crm-7',
      phone: null,
      creditBalance: 50,
    });

    const node = await send<NodeQuery, NodeQueryVariables>(reseller, 'Node', { id: ipass.id });
    expect(node.node).toEqual({ __typename: 'IssuedPass', id: ipass.id, passcode: ipass.passcode, status: 'ACTIVE' });
    expect((await send<NodeQuery, NodeQueryVariables>(reseller, 'Node', { id: pass.id })).node).toEqual({
      __typename: 'Pass',
      id: pass.id,
      name: 'Gym and Spa',
      paymentModel: 'PAYG',
    });
    expect((await send<NodeQuery, NodeQueryVariables>(reseller, 'Node', { id: ipass.client.id })).node).toEqual({
      __typename: 'Client',
      id: ipass.client.id,
      email: 'grace@example.com',
    });
  });

  it("another reseller's ids › read as null, never as the other reseller's data", async () => {
    const owner = await createReseller(app);
    const other = await createReseller(app);
    const pass = await createPassPackage(app, owner);
    const ipass = issued(await issue(owner, { passId: pass.id, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' }));

    expect(
      (await send<IssuedPassQuery, IssuedPassQueryVariables>(other, 'IssuedPass', { clientId: ipass.client.id })).issuedPass,
    ).toBeNull();
    expect((await send<ClientQuery, ClientQueryVariables>(other, 'Client', { id: ipass.client.id })).client).toBeNull();
    // node(id:) answers a plain null too: a foreign id reads exactly like a missing one.
    for (const id of [ipass.id, pass.id, ipass.client.id]) {
      const res = await gql<NodeQuery>(app, other.key, operation('Node'), { id } satisfies NodeQueryVariables);
      expect(res.body.data).toEqual({ node: null });
      expect(res.body.errors).toBeUndefined();
    }
  });
});

describe('IssuePass › failures are members of the result union', () => {
  it('an invalid e-mail › InputError with the GraphQL field name as param, and nothing written', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const result = await issue(reseller, { passId: pass.id, firstName: 'Ada', lastName: 'Lovelace', email: 'not-an-email' });
    expect(result.issuePass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'email' });
    expect(await app.sql('select id from client where reseller_id = ?', [reseller.id])).toEqual([]);
  });

  it("another reseller's pass › InputError on passId (the pass does not exist for this caller)", async () => {
    const owner = await createReseller(app);
    const other = await createReseller(app);
    const pass = await createPassPackage(app, owner);
    const result = await issue(other, { passId: pass.id, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect(result.issuePass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'passId' });
  });

  it('a PREPAID pass the business account cannot pay › UnprocessableError insufficient_balance, nothing written', async () => {
    const reseller = await createReseller(app, { balance: 100 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 29_900 });
    const result = await issue(reseller, { passId: pass.id, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect(result.issuePass).toMatchObject({ __typename: 'UnprocessableError', code: 'insufficient_balance', param: null });
    expect(await app.sql('select id from client where reseller_id = ?', [reseller.id])).toEqual([]);
    const [row] = await app.sql<{ balance: string }>('select balance from business_account where reseller_id = ?', [reseller.id]);
    expect(Number(row.balance)).toBe(100);
  });
});

describe('Passes', () => {
  it('pages newest first with Relay cursors › and carries each package as created', async () => {
    const reseller = await createReseller(app);
    const older = await createPassPackage(app, reseller, { name: 'Older', price: 1000 });
    app.clock.advance(1000);
    const newer = await createPassPackage(app, reseller, { name: 'Newer', price: 29_900, paymentModel: 'PREPAID', duration: 'ANNUALLY' });

    const first = await send<PassesQuery, PassesQueryVariables>(reseller, 'Passes', { first: 1 });
    expect(first.passes.edges.map((e) => e.node.id)).toEqual([newer.id]);
    expect(first.passes.edges[0].node).toMatchObject({
      name: 'Newer',
      price: 29_900,
      currency: 'EUR',
      duration: 'ANNUALLY',
      paymentModel: 'PREPAID',
      categories: [
        { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visitsAllowed: 8, creditAllocated: 0 },
        { type: 'SPA', tiers: ['SILVER'], visitsAllowed: null, creditAllocated: 50 },
      ],
    });
    expect(first.passes.pageInfo).toMatchObject({ hasNextPage: true, endCursor: newer.id });

    const second = await send<PassesQuery, PassesQueryVariables>(reseller, 'Passes', { first: 1, after: first.passes.pageInfo.endCursor });
    expect(second.passes.edges.map((e) => e.node.id)).toEqual([older.id]);
    expect(second.passes.pageInfo.hasNextPage).toBe(false);
  });

  it('a cursor that is no id of this list › a top-level invalid_cursor error, no data', async () => {
    const reseller = await createReseller(app);
    await createPassPackage(app, reseller);
    const res = await gql<PassesQuery>(app, reseller.key, operation('Passes'), {
      first: 1,
      after: 'ipass_01J0000000000000000000000',
    } satisfies PassesQueryVariables);
    expect(res.body.data).toBeNull();
    expect(res.body.errors?.map((e) => e.extensions?.code)).toEqual(['invalid_cursor']);
  });
});
