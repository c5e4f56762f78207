import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import {
  catalogueSettled,
  createClass,
  createClassCategory,
  createClassInstance,
  createCopayOption,
  createProvider,
  createSpaService,
} from '../support/catalog.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { gql, type Reply } from '../support/http.ts';

// Child connections are batched per place in the query (src/graphql/loaders.ts): aliases of one
// connection with different arguments each get their own pages, and neither they, a cursor, nor
// nodes(ids:) cost a statement per parent.
const app = useApp();

let reseller: TestReseller;
let other: TestReseller;
let category: { id: string };
/** Per gym: its classes and co-pay options, newest first; per spa: its services, newest first. */
const gyms: { id: string; classes: string[]; options: string[] }[] = [];
const spas: { id: string; services: string[] }[] = [];

beforeAll(async () => {
  reseller = await createReseller(app);
  other = await createReseller(app);
  category = await createClassCategory(app);
});

async function addProviders(count: number) {
  for (let i = 0; i < count; i++) {
    const gym = await createProvider(app, { category: 'GYM' });
    const classes: string[] = [];
    const options: string[] = [];
    for (let c = 0; c < 3; c++) {
      const cls = await createClass(app, gym.id, category.id);
      classes.unshift(cls.id);
      for (let d = 1; d <= 3; d++) await createClassInstance(app, cls.id, new Date(app.clock.now().getTime() + d * 86_400_000));
      options.unshift((await createCopayOption(app, gym.id)).id);
    }
    gyms.unshift({ id: gym.id, classes, options });
    const spa = await createProvider(app, { category: 'SPA' });
    const services: string[] = [];
    for (let s = 0; s < 3; s++) services.unshift((await createSpaService(app, spa.id)).id);
    spas.unshift({ id: spa.id, services });
  }
}

/**
 * The reply and the number of SQL statements the app sent to answer it, the API key's look-up left
 * out: it is cached for a fraction of a second (src/platform/auth.ts), so whether it runs is timing.
 */
async function counted(query: string, variables: Record<string, unknown> = {}): Promise<{ reply: Reply; statements: number }> {
  app.queries!.reset();
  const reply = await gql(app, reseller.key, query, variables);
  return { reply, statements: app.queries!.ownCount };
}

const ids = (connection: { edges: { node: { id: string } }[] }) => connection.edges.map((e) => e.node.id);

const ALIASES = `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Provider {
  newest: classes(first: 1) { edges { node { id soonest: instances(first: 1) { edges { node { id } } } all: instances { edges { node { id } } } } } }
  oldest: classes(last: 2) { edges { node { id } } }
  newestOption: copayOptions(first: 1) { edges { node { id } } }
  allOptions: copayOptions(first: 5) { edges { node { id } } }
  newestService: services(first: 1) { edges { node { id } } }
  oldestServices: services(last: 2) { edges { node { id } } }
} } }`;

describe('aliases of a child connection with different arguments', () => {
  const runs: { providers: number; statements: number }[] = [];

  async function check() {
    const providerIds = [...gyms.map((g) => g.id), ...spas.map((s) => s.id)];
    const { reply, statements } = await counted(ALIASES, { ids: providerIds });
    expect(reply.body.errors, reply.text).toBeUndefined();
    const nodes = reply.body.data.nodes as Record<
      string,
      { edges: { node: { id: string } & Record<string, { edges: { node: { id: string } }[] }> }[] }
    >[];
    gyms.forEach((gym, i) => {
      const node = nodes[i];
      expect(ids(node.newest)).toEqual([gym.classes[0]]);
      expect(ids(node.oldest)).toEqual(gym.classes.slice(1));
      expect(ids(node.newestOption)).toEqual([gym.options[0]]);
      expect(ids(node.allOptions)).toEqual(gym.options);
      expect(ids(node.newestService)).toEqual([]);
      // Each alias of Class.instances under the newest class pages on its own: 1 and all 3.
      const [cls] = node.newest.edges;
      expect(cls.node.soonest.edges).toHaveLength(1);
      expect(cls.node.all.edges).toHaveLength(3);
      expect(cls.node.soonest.edges[0].node.id).toBe(cls.node.all.edges[0].node.id);
    });
    spas.forEach((spa, i) => {
      const node = nodes[gyms.length + i];
      expect(ids(node.newestService)).toEqual([spa.services[0]]);
      expect(ids(node.oldestServices)).toEqual(spa.services.slice(1));
      expect(ids(node.newest)).toEqual([]);
    });
    runs.push({ providers: providerIds.length, statements });
  }

  it('each alias gets its own page, for 10 and for 30 providers, in the same number of statements', async () => {
    await addProviders(5);
    await check();
    await addProviders(10);
    await check();
    // The providers, then one statement per alias: 2 × classes, 2 × instances, 2 × co-pay options, 2 × services.
    expect(
      runs.map((r) => r.statements),
      JSON.stringify(runs),
    ).toEqual([9, 9]);
  });
});

describe('a cursor on a child connection of many parents', () => {
  it("pages the cursor's own list and fails the others' with invalid_cursor, in two statements for the connection however many providers", async () => {
    // Read once, so every provider is kept by the process (src/platform/catalogue-cache.ts) for both
    // counts, once their creation is heard.
    await catalogueSettled(app);
    await counted('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: gyms.map((g) => g.id) });
    const counts: number[] = [];
    for (const gymCount of [3, gyms.length]) {
      const gym = gyms[gymCount - 1];
      const res = await counted(
        `query($ids: [ID!]!, $after: String) { nodes(ids: $ids) { ... on Provider { copayOptions(first: 1, after: $after) { edges { node { id } } } } } }`,
        { ids: gyms.slice(0, gymCount).map((g) => g.id), after: gym.options[0] },
      );
      // nodes(ids:) answers nullable items: the cursor's own provider pages on, every other one fails.
      const nodes = res.reply.body.data.nodes as ({ copayOptions: { edges: { node: { id: string } }[] } } | null)[];
      expect(nodes.slice(0, gymCount - 1)).toEqual(Array(gymCount - 1).fill(null));
      expect(ids(nodes[gymCount - 1]!.copayOptions)).toEqual([gym.options[1]]);
      expect(res.reply.body.errors).toHaveLength(gymCount - 1);
      for (const error of res.reply.body.errors) expect(error.extensions).toMatchObject({ code: 'invalid_cursor', param: 'after' });
      counts.push(res.statements);
    }
    // The cursor's provider and sort key, the page (the providers kept).
    expect(counts).toEqual([2, 2]);
  });
});

describe('node loaders', () => {
  it("nodes(ids:) answers in the order asked, null for another reseller's ids, one statement per type however many ids", async () => {
    const ownPass = await createPassPackage(app, reseller);
    const foreignPass = await createPassPackage(app, other);
    const own = [
      await issuePass(app, reseller, ownPass.id, { email: 'a@example.com' }),
      await issuePass(app, reseller, ownPass.id, { email: 'b@example.com' }),
    ];
    const foreign = await issuePass(app, other, foreignPass.id);
    // A provider no request has read yet: not kept by the process (src/platform/catalogue-cache.ts), so it is read.
    const gym = await createProvider(app, { category: 'GYM' });
    const asked = [
      own[1].client_id,
      foreign.client_id,
      gym.id,
      own[0].id,
      foreignPass.id,
      own[0].client_id,
      foreign.id,
      ownPass.id,
      spas[0].services[0],
      gyms[1].classes[0],
    ];
    const { reply, statements } = await counted('query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }', { ids: asked });
    expect(reply.body.errors, reply.text).toBeUndefined();
    expect(reply.body.data.nodes).toEqual([
      { __typename: 'Client', id: own[1].client_id },
      null,
      { __typename: 'Provider', id: gym.id },
      { __typename: 'IssuedPass', id: own[0].id },
      null,
      { __typename: 'Client', id: own[0].client_id },
      null,
      { __typename: 'Pass', id: ownPass.id },
      { __typename: 'SpaService', id: spas[0].services[0] },
      { __typename: 'Class', id: gyms[1].classes[0] },
    ]);
    // Clients, providers, issued passes, passes, services, classes: one statement each.
    expect(statements).toBe(6);
  });

  it('client(id:) and provider(id:) answer through the same loaders: two of each in one request cost one statement per type', async () => {
    const pass = await createPassPackage(app, reseller);
    const mine = await issuePass(app, reseller, pass.id, { email: 'c@example.com' });
    const foreign = await issuePass(app, other, (await createPassPackage(app, other)).id);
    const { reply, statements } = await counted(
      `query($mine: ID!, $foreign: ID!, $gym: ID!, $unknown: ID!) {
      mine: client(id: $mine) { id } foreign: client(id: $foreign) { id }
      gym: provider(id: $gym) { id } unknown: provider(id: $unknown) { id }
    }`,
      { mine: mine.client_id, foreign: foreign.client_id, gym: gyms[0].id, unknown: 'prv_unknown' },
    );
    expect(reply.body).toEqual({ data: { mine: { id: mine.client_id }, foreign: null, gym: { id: gyms[0].id }, unknown: null } });
    expect(statements).toBe(2);
  });
});
