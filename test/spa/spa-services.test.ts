import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createProvider, createSpaService } from '../support/catalog.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { expectError, expectValidationError } from '../support/assertions.ts';

const app = useApp();
let reseller: TestReseller;
let spaId: string;
/** The spa's services, oldest first. */
let services: { id: string; name: string }[];
let otherSpaServiceId: string;
let gymId: string;

const UNKNOWN_SPA = 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ';

beforeAll(async () => {
  reseller = await createReseller(app);
  spaId = (await createProvider(app, { name: 'Thermae', category: 'SPA', tier: 'GOLD' })).id;
  services = [];
  for (const [name, durationMinutes, copayAmount] of [
    ['Sauna', 30, null],
    ['Massage', 60, 4500],
    ['Facial', 45, 3000],
  ] as const) {
    services.push(await createSpaService(app, spaId, { name, durationMinutes, credits: durationMinutes / 3, copayAmount }));
  }
  const otherSpa = await createProvider(app, { name: 'Other Spa', category: 'SPA' });
  otherSpaServiceId = (await createSpaService(app, otherSpa.id, { name: 'Hammam' })).id;
  gymId = (await createProvider(app, { name: 'Iron Gym', category: 'GYM' })).id;
  await createSpaService(app, gymId, { name: 'Stray row on a gym' });
});

const list = (id: string, query = '') => v3(app, `/spas/${id}/services${query}`, { key: reseller.key });

describe('GET /spas/{spa_id}/services', () => {
  it("lists the spa's services newest first as V3 `service` objects (copay_amount null when there is none)", async () => {
    const res = await list(spaId);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      url: `/v3/api/business/reseller/spas/${spaId}/services`,
      has_more: false,
      message: 'Services retrieved successfully',
      data: [
        { object: 'service', id: services[2].id, name: 'Facial', duration_minutes: 45, credits: 15, copay_amount: 3000, currency: 'EUR' },
        { object: 'service', id: services[1].id, name: 'Massage', duration_minutes: 60, credits: 20, copay_amount: 4500, currency: 'EUR' },
        { object: 'service', id: services[0].id, name: 'Sauna', duration_minutes: 30, credits: 10, copay_amount: null, currency: 'EUR' },
      ],
    });
  });

  it('pages forward with starting_after and back with ending_before, keyset on the id', async () => {
    const first = await list(spaId, '?limit=2');
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual([services[2].id, services[1].id]);
    expect(first.body.has_more).toBe(true);
    const second = await list(spaId, `?limit=2&starting_after=${services[1].id}`);
    expect(second.body.data.map((s: { id: string }) => s.id)).toEqual([services[0].id]);
    expect(second.body.has_more).toBe(false);
    const back = await list(spaId, `?limit=1&ending_before=${services[0].id}`);
    expect(back.body.data.map((s: { id: string }) => s.id)).toEqual([services[1].id]);
    expect(back.body.has_more).toBe(true);
  });

  it("a cursor from another spa's list › 400 invalid_cursor", async () => {
    expectError(await list(spaId, `?starting_after=${otherSpaServiceId}`), 400, 'invalid_cursor', 'starting_after');
  });

  it('bad paging parameters and unknown ones › 400 naming them', async () => {
    expectValidationError(await list(spaId, '?limit=0'), 'limit');
    expectValidationError(await list(spaId, '?limit=101'), 'limit');
    expectValidationError(await list(spaId, `?starting_after=${services[0].id}&ending_before=${services[2].id}`), 'ending_before');
    expectValidationError(await list(spaId, '?category=SPA'), 'category');
  });

  it.each([
    ['an unknown provider id', UNKNOWN_SPA],
    ['a malformed id', 'not-an-id'],
    ['a service id', 'svc_01JZZZZZZZZZZZZZZZZZZZZZZZ'],
  ])('%s › 404 resource_not_found', async (_, id) => {
    expectError(await list(id), 404, 'resource_not_found');
  });

  it('a provider that is a gym › 404, even with spa_service rows', async () => {
    expectError(await list(gymId), 404, 'resource_not_found');
  });

  it('without an API key › 401', async () => {
    const res = await v3(app, `/spas/${spaId}/services`);
    expectError(res, 401, 'invalid_api_key');
  });
});

const SERVICE_FIELDS = 'id name durationMinutes credits copayAmount currency spa { id name }';

describe('GraphQL: SpaService and Provider.services', () => {
  it('node(id:) resolves a service as a SpaService', async () => {
    const res = await gql(app, reseller.key, `query($id: ID!) { node(id: $id) { __typename ... on SpaService { ${SERVICE_FIELDS} } } }`, {
      id: services[0].id,
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.node).toEqual({
      __typename: 'SpaService',
      id: services[0].id,
      name: 'Sauna',
      durationMinutes: 30,
      credits: 10,
      copayAmount: null,
      currency: 'EUR',
      spa: { id: spaId, name: 'Thermae' },
    });
  });

  it('node(id:) of an unknown service › null', async () => {
    const res = await gql(app, reseller.key, 'query($id: ID!) { node(id: $id) { id } }', { id: 'svc_01JZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(res.body).toEqual({ data: { node: null } });
  });

  const PROVIDER_SERVICES = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    node(id: $id) { ... on Provider { services(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }
  }`;

  it('Provider.services pages newest first with first/after and last/before', async () => {
    const page1 = await gql(app, reseller.key, PROVIDER_SERVICES, { id: spaId, first: 2 });
    expect(page1.body.errors).toBeUndefined();
    const c1 = page1.body.data.node.services;
    expect(c1.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Facial', 'Massage']);
    expect(c1.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: services[2].id, endCursor: services[1].id });
    const page2 = await gql(app, reseller.key, PROVIDER_SERVICES, { id: spaId, first: 2, after: c1.pageInfo.endCursor });
    expect(page2.body.data.node.services.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Sauna']);
    expect(page2.body.data.node.services.pageInfo.hasNextPage).toBe(false);
    const back = await gql(app, reseller.key, PROVIDER_SERVICES, { id: spaId, last: 1, before: services[0].id });
    expect(back.body.data.node.services.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Massage']);
    expect(back.body.data.node.services.pageInfo.hasPreviousPage).toBe(true);
    const tail = await gql(app, reseller.key, PROVIDER_SERVICES, { id: spaId, last: 2 });
    expect(tail.body.data.node.services.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Massage', 'Sauna']);
  });

  it('Provider.services of a gym is empty', async () => {
    const res = await gql(app, reseller.key, PROVIDER_SERVICES, { id: gymId, first: 5 });
    expect(res.body.data.node.services.edges).toEqual([]);
  });

  it("a cursor of another spa's list › invalid_cursor; first above 100 › validation_error on first", async () => {
    const bad = await gql(app, reseller.key, PROVIDER_SERVICES, { id: spaId, first: 2, after: otherSpaServiceId });
    expect(bad.body.errors?.[0].extensions).toMatchObject({ code: 'invalid_cursor' });
    const big = await gql(app, reseller.key, PROVIDER_SERVICES, { id: spaId, first: 101 });
    expect(big.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'first' });
  });

  it('services of a whole page of providers cost the same statements for 2 providers as for 8', async () => {
    const spas: string[] = [];
    for (let i = 0; i < 8; i++) {
      const spa = await createProvider(app, { name: `Batch Spa ${i}`, category: 'SPA' });
      for (let j = 0; j < 3; j++) await createSpaService(app, spa.id, { name: `Treatment ${i}.${j}` });
      spas.push(spa.id);
    }
    const query = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Provider { id services(first: 2) { edges { node { id name } } pageInfo { hasNextPage } } } } }`;
    const queries = app.queries;
    if (!queries) throw new Error('the test app counts the statements it sends');
    const statementsFor = async (ids: string[]) => {
      queries.reset();
      const res = await gql(app, reseller.key, query, { ids });
      expect(res.body.errors).toBeUndefined();
      for (const [i, node] of res.body.data.nodes.entries()) {
        const n = spas.indexOf(ids[i]);
        expect(node.services.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual([`Treatment ${n}.2`, `Treatment ${n}.1`]);
        expect(node.services.pageInfo.hasNextPage).toBe(true);
      }
      return queries.ownCount;
    };
    const few = await statementsFor(spas.slice(0, 2));
    const many = await statementsFor(spas);
    expect(many).toBe(few);
  });
});
