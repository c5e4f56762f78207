import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createCopayOption, createProvider } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { pageBackward, pageForward, statementsDuring } from './support.ts';

const app = useApp({}, { now: new Date('2027-03-10T12:00:00Z') });
let reseller: TestReseller;
beforeAll(async () => {
  reseller = await createReseller(app);
});

const ids = (body: { data: { id: string }[] }) => body.data.map((p) => p.id);

describe('GET /providers/{providerBranchId}/gym-copay-options', () => {
  it("answers the provider's options in the spec 2.4 shape, newest first", async () => {
    const gym = await createProvider(app, { tier: 'GOLD' });
    const other = await createProvider(app, { tier: 'GOLD' });
    const first = await createCopayOption(app, gym.id, {
      name: '5 visits',
      tiers: ['GOLD', 'PLATINUM'],
      maxVisits: 5,
      visitDurationDays: 14,
      amount: 1500,
      credits: 15,
      currency: 'GBP',
    });
    app.clock.advance(1000);
    const second = await createCopayOption(app, gym.id);
    await createCopayOption(app, other.id);

    const res = await v3(app, `/providers/${gym.id}/gym-copay-options`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'list',
      has_more: false,
      url: `/v3/api/business/reseller/providers/${gym.id}/gym-copay-options`,
      message: expect.any(String),
    });
    expect(ids(res.body)).toEqual([second.id, first.id]);
    expect(res.body.data[1]).toEqual({
      object: 'copay_option',
      id: first.id,
      name: '5 visits',
      currency: 'GBP',
      tiers: ['GOLD', 'PLATINUM'],
      max_visits: 5,
      visit_duration_days: 14,
      client_copay_amount: 1500,
      client_copay_credits: 15,
    });
  });

  it('pages forward and backward through every option once', async () => {
    const gym = await createProvider(app);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await createCopayOption(app, gym.id, { name: `option ${i}` })).id);
    const expected = [...made].reverse();
    const path = `/providers/${gym.id}/gym-copay-options`;
    expect((await pageForward(app, reseller.key, path, 3)).ids).toEqual(expected);
    expect(await pageBackward(app, reseller.key, path, 2, expected.at(-1)!)).toEqual(expected.slice(0, -1));
  });

  it('a spa or a gym without options › an empty list', async () => {
    const spa = await createProvider(app, { category: 'SPA' });
    const res = await v3(app, `/providers/${spa.id}/gym-copay-options`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: [], has_more: false });
  });

  it('an unknown provider › 404 resource_not_found', async () => {
    for (const id of ['prov_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'copay_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'x']) {
      const res = await v3(app, `/providers/${id}/gym-copay-options`, { key: reseller.key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_not_found');
    }
  });

  it('bad paging input › 400 validation_error with param, or invalid_cursor for an option of another provider', async () => {
    const gym = await createProvider(app);
    const other = await createProvider(app);
    const foreign = await createCopayOption(app, other.id);
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['lat=1&lon=1', 'lat'],
      [`starting_after=${foreign.id}&ending_before=${foreign.id}`, 'ending_before'],
    ];
    for (const [query, param] of cases) {
      const res = await v3(app, `/providers/${gym.id}/gym-copay-options?${query}`, { key: reseller.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', param });
    }
    const res = await v3(app, `/providers/${gym.id}/gym-copay-options?starting_after=${foreign.id}`, { key: reseller.key });
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });
});

describe('GraphQL Provider.copayOptions and CopayOption', () => {
  const FIELDS = 'id name currency tiers maxVisits visitDurationDays clientCopayAmount clientCopayCredits provider { id }';

  it('a page of providers with their options costs one co-pay statement; first and last pages are right per provider', async () => {
    const tier = 'BATCHTIER';
    const providers = [];
    const options = new Map<string, string[]>();
    for (let i = 0; i < 4; i++) {
      const p = await createProvider(app, { tier });
      providers.push(p);
      const made: string[] = [];
      for (let j = 0; j < i; j++) made.push((await createCopayOption(app, p.id, { name: `p${i} o${j}` })).id);
      options.set(p.id, made.reverse()); // newest first
    }
    const query = `{ providers(tier: "${tier}", first: 10) { edges { node { id
      newest: copayOptions(first: 2) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }
      oldest: copayOptions(last: 1) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }
    } } } }`;
    let res!: Awaited<ReturnType<typeof gql>>;
    const sql = await statementsDuring(app, async () => {
      res = await gql(app, reseller.key, query);
    });
    expect(res.body.errors).toBeUndefined();
    // One statement per page shape (first 2, last 1), not one per provider.
    expect(sql.filter((q) => /copay_option/.test(q))).toHaveLength(2);
    type Conn = { edges: { node: { id: string } }[]; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean } };
    const nodes = (res.body.data as { providers: { edges: { node: { id: string; newest: Conn; oldest: Conn } }[] } }).providers.edges.map(
      (e) => e.node,
    );
    expect(nodes.map((n) => n.id)).toEqual(providers.map((p) => p.id).reverse());
    for (const node of nodes) {
      const all = options.get(node.id)!;
      expect(node.newest.edges.map((e) => e.node.id)).toEqual(all.slice(0, 2));
      expect(node.newest.pageInfo).toEqual({ hasNextPage: all.length > 2, hasPreviousPage: false });
      expect(node.oldest.edges.map((e) => e.node.id)).toEqual(all.slice(-1));
      expect(node.oldest.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: all.length > 1 });
    }
  });

  it('pages on with after/before for one provider; a co-pay option is a node', async () => {
    const gym = await createProvider(app);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await createCopayOption(app, gym.id, { tiers: ['GOLD'] })).id);
    const [newest, middle, oldest] = made.reverse();
    const res = await gql(
      app,
      reseller.key,
      `query($id: ID!, $after: String, $before: String, $option: ID!) {
      provider(id: $id) {
        next: copayOptions(first: 5, after: $after) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }
        previous: copayOptions(last: 5, before: $before) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }
      }
      node(id: $option) { __typename ... on CopayOption { ${FIELDS} } }
    }`,
      { id: gym.id, after: newest, before: oldest, option: middle },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.provider.next).toEqual({
      edges: [{ node: { id: middle } }, { node: { id: oldest } }],
      pageInfo: { hasNextPage: false, hasPreviousPage: true },
    });
    expect(res.body.data.provider.previous).toEqual({
      edges: [{ node: { id: newest } }, { node: { id: middle } }],
      pageInfo: { hasNextPage: true, hasPreviousPage: false },
    });
    expect(res.body.data.node).toEqual({
      __typename: 'CopayOption',
      id: middle,
      name: '10 visits',
      currency: 'EUR',
      tiers: ['GOLD'],
      maxVisits: 10,
      visitDurationDays: 30,
      clientCopayAmount: 2500,
      clientCopayCredits: 25,
      provider: { id: gym.id },
    });
  });

  it('a cursor of another provider › an invalid_cursor error', async () => {
    const gym = await createProvider(app);
    const other = await createProvider(app);
    const foreign = await createCopayOption(app, other.id);
    const res = await gql(
      app,
      reseller.key,
      `query($id: ID!, $after: String) { provider(id: $id) { copayOptions(first: 5, after: $after) { edges { cursor } } } }`,
      { id: gym.id, after: foreign.id },
    );
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'invalid_cursor' });
  });
});
