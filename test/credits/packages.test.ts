import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectGraphQLError, expectValidationError } from '../support/assertions.ts';
import { createCreditPackage } from '../support/credits.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// GET /credit_packages and GraphQL `creditPackages` (docs/partner-guide.md "Credits"): a reseller's own packages,
// in its currency, newest first, paged like every V3 list.

const app = useApp({}, { now: new Date('2026-05-04T10:00:00Z') });

let reseller: TestReseller;
/** The reseller's packages, newest first (the list order). */
let ids: string[];
let other: TestReseller;
let othersPackage: string;

beforeAll(async () => {
  reseller = await createReseller(app, { currency: 'EUR' });
  ids = [];
  for (let i = 1; i <= 12; i++) {
    app.clock.advance(1000);
    ids.unshift((await createCreditPackage(app, reseller, { name: `Pack ${i}`, credits: 10 * i, price: 500 * i })).id);
  }
  other = await createReseller(app, { currency: 'USD' });
  othersPackage = (await createCreditPackage(app, other, { name: 'Dollars', credits: 50, price: 2000 })).id;
});

const list = (query = '', key = reseller.key) => v3(app, `/credit_packages${query}`, { key });
const idsOf = (res: { body: { data: { id: string }[] } }) => res.body.data.map((p) => p.id);

describe('GET /credit_packages', () => {
  it('without limit › the 10 newest in the list envelope, each a credit_package in the reseller’s currency', async () => {
    const res = await list();
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: true, url: '/v3/api/business/reseller/credit_packages' });
    expect(res.body.message).toEqual(expect.any(String));
    expect(idsOf(res)).toEqual(ids.slice(0, 10));
    expect(res.body.data[0]).toEqual({
      object: 'credit_package',
      id: ids[0],
      name: 'Pack 12',
      credits: 120,
      price: 6000,
      currency: 'EUR',
      created: Math.floor(new Date('2026-05-04T10:00:12Z').getTime() / 1000),
    });
  });

  it('pages with limit, starting_after and ending_before; has_more says whether there is more in that direction', async () => {
    const first = await list('?limit=5');
    expect(idsOf(first)).toEqual(ids.slice(0, 5));
    expect(first.body.has_more).toBe(true);
    const second = await list(`?limit=5&starting_after=${ids[4]}`);
    expect(idsOf(second)).toEqual(ids.slice(5, 10));
    expect(second.body.has_more).toBe(true);
    const last = await list(`?limit=5&starting_after=${ids[9]}`);
    expect(idsOf(last)).toEqual(ids.slice(10));
    expect(last.body.has_more).toBe(false);
    const back = await list(`?limit=5&ending_before=${ids[5]}`);
    expect(idsOf(back)).toEqual(ids.slice(0, 5));
    expect(back.body.has_more).toBe(false);
    const middle = await list(`?limit=3&ending_before=${ids[10]}`);
    expect(idsOf(middle)).toEqual(ids.slice(7, 10));
    expect(middle.body.has_more).toBe(true);
    expect(idsOf(await list('?limit=100'))).toEqual(ids);
  });

  it('another reseller sees only its own packages, in its own currency', async () => {
    const res = await list('', other.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([expect.objectContaining({ id: othersPackage, currency: 'USD' })]);
    expect(res.body.has_more).toBe(false);
  });

  it('a bad limit › 400 validation_error naming limit', async () => {
    for (const limit of ['0', '101', '-1', 'ten', '1.5', '']) {
      expectValidationError(await list(`?limit=${limit}`), 'limit');
    }
  });

  it('a cursor that is not a package of this list › 400 invalid_cursor naming it', async () => {
    expectError(await list(`?starting_after=${othersPackage}`), 400, 'invalid_cursor', 'starting_after');
    expectError(await list('?ending_before=cpkg_nope'), 400, 'invalid_cursor', 'ending_before');
    expectValidationError(await list(`?starting_after=${ids[0]}&ending_before=${ids[3]}`), 'ending_before');
    expectValidationError(await list('?page=2'), 'page');
  });
});

describe('GraphQL creditPackages', () => {
  const QUERY = `query($first: Int, $after: String, $last: Int, $before: String) {
    creditPackages(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id name credits price currency createdAt } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    } }`;

  it('answers the REST list’s packages, in its order, with the same values', async () => {
    const rest = await list('?limit=100');
    const res = await gql(app, reseller.key, QUERY, { first: 100 });
    expect(res.body.errors, res.text).toBeUndefined();
    const nodes = res.body.data.creditPackages.edges.map((e: { node: Record<string, unknown> }) => e.node);
    expect(nodes).toEqual(
      rest.body.data.map((p: Record<string, any>) => ({
        id: p.id,
        name: p.name,
        credits: p.credits,
        price: p.price,
        currency: p.currency,
        createdAt: new Date(p.created * 1000).toISOString().replace('.000', ''),
      })),
    );
  });

  it('pages with first/after and last/before like the REST cursors', async () => {
    const page = await gql(app, reseller.key, QUERY, { first: 4, after: ids[1] });
    expect(page.body.data.creditPackages.edges.map((e: { cursor: string }) => e.cursor)).toEqual(ids.slice(2, 6));
    expect(page.body.data.creditPackages.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const back = await gql(app, reseller.key, QUERY, { last: 2, before: ids[2] });
    expect(back.body.data.creditPackages.edges.map((e: { cursor: string }) => e.cursor)).toEqual(ids.slice(0, 2));
  });

  it('a bad page size or a foreign cursor › an error naming the argument', async () => {
    expectGraphQLError(await gql(app, reseller.key, QUERY, { first: 101 }), 'validation_error', 'first');
    expectGraphQLError(await gql(app, reseller.key, QUERY, { after: othersPackage }), 'invalid_cursor', 'after');
  });

  it('node(id:) reaches a package of the caller only', async () => {
    const q = (id: string) => gql(app, reseller.key, `{ node(id: "${id}") { __typename ... on CreditPackage { id name } } }`);
    expect((await q(ids[0])).body.data.node).toEqual({ __typename: 'CreditPackage', id: ids[0], name: 'Pack 12' });
    expect((await q(othersPackage)).body).toEqual({ data: { node: null } });
  });
});
