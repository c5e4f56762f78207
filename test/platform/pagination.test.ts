import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/platform/errors.ts';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';
import { expectError, expectGraphQLError } from '../support/assertions.ts';

const app = useApp();

interface PassList {
  object: string;
  data: { object: string; id: string; created: number }[];
  has_more: boolean;
  url: string;
  message: string;
}

interface PassConnection {
  passes: {
    edges: { cursor: string; node: { id: string } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  } | null;
}

const PASSES = `query Passes($first: Int, $after: String, $last: Int, $before: String) {
  passes(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

/** Creates `n` pass packages a second apart; returns their ids newest first (the list order). */
async function createPasses(reseller: TestReseller, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    app.clock.advance(1000);
    ids.push((await createPassPackage(app, reseller, { name: `Pass ${i + 1}` })).id);
  }
  return ids.reverse();
}

const listPasses = (reseller: TestReseller, query = '') => v3<PassList>(app, `/passes${query}`, { key: reseller.key });
const ids = (res: Reply<PassList>) => res.body.data.map((p) => p.id);

const queryPasses = (reseller: TestReseller, variables: Record<string, unknown>) =>
  gql<PassConnection>(app, reseller.key, PASSES, variables);
const nodeIds = (res: Reply<{ data?: PassConnection }>) => res.body.data!.passes!.edges.map((e) => e.node.id);

describe('GET /passes', () => {
  it('without limit › answers the 10 newest with has_more true', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 12);
    const res = await listPasses(reseller);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(all.slice(0, 10));
    expect(res.body.has_more).toBe(true);
  });

  it('a list › answers the V3 envelope with object list, the list url and a message', async () => {
    const reseller = await createReseller(app);
    const [only] = await createPasses(reseller, 1);
    const res = await listPasses(reseller);
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(res.body).toMatchObject({ object: 'list', has_more: false, url: '/v3/api/business/reseller/passes' });
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.message.length).toBeGreaterThan(0);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ object: 'pass', id: only });
  });

  it('a reseller without passes › answers an empty list with has_more false', async () => {
    const reseller = await createReseller(app);
    const res = await listPasses(reseller);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', data: [], has_more: false });
  });

  it('several passes › answers them newest first (descending creation)', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 5);
    const res = await listPasses(reseller, '?limit=100');
    expect(ids(res)).toEqual(all);
    const created = res.body.data.map((p) => p.created);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(new Set(created).size).toBe(5);
  });

  it('limit 1 › answers exactly one pass, the newest', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    const res = await listPasses(reseller, '?limit=1');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([all[0]]);
    expect(res.body.has_more).toBe(true);
  });

  it('limit 100 › is accepted and answers every pass with has_more false', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 12);
    const res = await listPasses(reseller, '?limit=100');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(all);
    expect(res.body.has_more).toBe(false);
  });

  it('limit equal to the number of passes › answers them all with has_more false', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    const res = await listPasses(reseller, '?limit=3');
    expect(ids(res)).toEqual(all);
    expect(res.body.has_more).toBe(false);
  });

  for (const [situation, limit] of [
    ['limit 0', '0'],
    ['limit above 100', '101'],
    ['a negative limit', '-1'],
    ['a non-numeric limit', 'abc'],
    ['a fractional limit', '1.5'],
    ['an empty limit', ''],
  ] as const) {
    it(`${situation} › answers 400 validation_error naming limit`, async () => {
      const reseller = await createReseller(app);
      await createPasses(reseller, 1);
      expectError(await v3<ErrorBody>(app, `/passes?limit=${limit}`, { key: reseller.key }), 400, 'validation_error', 'limit');
    });
  }

  it('starting_after and ending_before together › answers 400 validation_error naming one of them', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    const res = await v3<ErrorBody>(app, `/passes?starting_after=${all[0]}&ending_before=${all[2]}`, { key: reseller.key });
    expectError(res, 400, 'validation_error', expect.stringMatching(/^(starting_after|ending_before)$/));
    expect(['starting_after', 'ending_before']).toContain(res.body.error.param);
  });

  it('an unknown query parameter › answers 400 validation_error naming it', async () => {
    const reseller = await createReseller(app);
    expectError(await v3<ErrorBody>(app, '/passes?limt=5', { key: reseller.key }), 400, 'validation_error', 'limt');
  });

  for (const param of ['starting_after', 'ending_before'] as const) {
    it(`a malformed ${param} cursor › answers 400 invalid_cursor`, async () => {
      const reseller = await createReseller(app);
      await createPasses(reseller, 2);
      expectError(await v3<ErrorBody>(app, `/passes?${param}=not-a-cursor`, { key: reseller.key }), 400, 'invalid_cursor', param);
    });

    it(`${param} with an id of another kind › answers 400 invalid_cursor`, async () => {
      const reseller = await createReseller(app);
      const [pass] = await createPasses(reseller, 2);
      const issued = await issuePass(app, reseller, pass);
      for (const other of [issued.client_id, issued.id, reseller.id]) {
        expectError(await v3<ErrorBody>(app, `/passes?${param}=${other}`, { key: reseller.key }), 400, 'invalid_cursor', param);
      }
    });

    it(`${param} with another reseller's pass id › answers 400 invalid_cursor`, async () => {
      const reseller = await createReseller(app);
      const other = await createReseller(app);
      await createPasses(reseller, 2);
      const [foreign] = await createPasses(other, 1);
      expectError(await v3<ErrorBody>(app, `/passes?${param}=${foreign}`, { key: reseller.key }), 400, 'invalid_cursor', param);
    });
  }

  it('paging forward with starting_after through 25 passes › visits each exactly once, has_more false on the last page', async () => {
    const reseller = await createReseller(app);
    const other = await createReseller(app);
    const all = await createPasses(reseller, 25);
    await createPasses(other, 3);
    const seen: string[] = [];
    const hasMore: boolean[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = await listPasses(reseller, `?limit=10${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res));
      hasMore.push(res.body.has_more);
      if (!res.body.has_more) break;
      cursor = res.body.data.at(-1)!.id;
    }
    expect(hasMore).toEqual([true, true, false]);
    expect(seen).toEqual(all);
  });

  it('starting_after the last item › answers an empty page with has_more false', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    const res = await listPasses(reseller, `?starting_after=${all[2]}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.has_more).toBe(false);
  });

  it('paging backward with ending_before › answers the newer items in list order, has_more while newer ones remain', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 25);
    const first = await listPasses(reseller, `?limit=10&ending_before=${all[24]}`);
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual(all.slice(14, 24));
    expect(first.body.has_more).toBe(true);

    const second = await listPasses(reseller, `?limit=10&ending_before=${first.body.data[0].id}`);
    expect(ids(second)).toEqual(all.slice(4, 14));
    expect(second.body.has_more).toBe(true);

    const last = await listPasses(reseller, `?limit=10&ending_before=${second.body.data[0].id}`);
    expect(ids(last)).toEqual(all.slice(0, 4));
    expect(last.body.has_more).toBe(false);
  });

  it('ending_before the newest item › answers an empty page with has_more false', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    const res = await listPasses(reseller, `?ending_before=${all[0]}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.has_more).toBe(false);
  });

  it("another reseller's passes › never appear in the list", async () => {
    const reseller = await createReseller(app);
    const other = await createReseller(app);
    const own = await createPasses(reseller, 2);
    const foreign = await createPasses(other, 2);
    const res = await listPasses(reseller, '?limit=100');
    expect(ids(res)).toEqual(own);
    for (const id of foreign) expect(ids(res)).not.toContain(id);
  });
});

describe('query passes (GraphQL connection)', () => {
  it('without first or last › answers the 10 newest, hasNextPage true', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 12);
    const res = await queryPasses(reseller, {});
    expect(res.body.errors).toBeUndefined();
    expect(nodeIds(res)).toEqual(all.slice(0, 10));
    expect(res.body.data!.passes!.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: all[0], endCursor: all[9] });
  });

  it('edges › carry cursors equal to their node ids', async () => {
    const reseller = await createReseller(app);
    await createPasses(reseller, 4);
    const res = await queryPasses(reseller, { first: 4 });
    const { edges, pageInfo } = res.body.data!.passes!;
    expect(edges).toHaveLength(4);
    for (const edge of edges) expect(edge.cursor).toBe(edge.node.id);
    expect(pageInfo.startCursor).toBe(edges[0].node.id);
    expect(pageInfo.endCursor).toBe(edges[3].node.id);
  });

  it('no passes › answers no edges and null cursors', async () => {
    const reseller = await createReseller(app);
    const res = await queryPasses(reseller, { first: 5 });
    expect(res.body.data!.passes).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    });
  });

  it('first 1 and first 100 › are accepted', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    expect(nodeIds(await queryPasses(reseller, { first: 1 }))).toEqual([all[0]]);
    const res = await queryPasses(reseller, { first: 100 });
    expect(nodeIds(res)).toEqual(all);
    expect(res.body.data!.passes!.pageInfo.hasNextPage).toBe(false);
  });

  it('paging forward with first/after through 25 passes › visits each exactly once, hasNextPage false on the last page', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 25);
    const seen: string[] = [];
    const pages: { hasNextPage: boolean; hasPreviousPage: boolean }[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res = await queryPasses(reseller, { first: 10, after });
      expect(res.body.errors).toBeUndefined();
      const { pageInfo } = res.body.data!.passes!;
      seen.push(...nodeIds(res));
      pages.push({ hasNextPage: pageInfo.hasNextPage, hasPreviousPage: pageInfo.hasPreviousPage });
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    expect(pages).toEqual([
      { hasNextPage: true, hasPreviousPage: false },
      { hasNextPage: true, hasPreviousPage: true },
      { hasNextPage: false, hasPreviousPage: true },
    ]);
    expect(seen).toEqual(all);
  });

  it('paging backward with last/before › answers the newer items in list order, hasPreviousPage while newer ones remain', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 25);
    const first = await queryPasses(reseller, { last: 10, before: all[24] });
    expect(first.body.errors).toBeUndefined();
    expect(nodeIds(first)).toEqual(all.slice(14, 24));
    expect(first.body.data!.passes!.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: true,
      startCursor: all[14],
      endCursor: all[23],
    });

    const second = await queryPasses(reseller, { last: 10, before: first.body.data!.passes!.pageInfo.startCursor });
    expect(nodeIds(second)).toEqual(all.slice(4, 14));
    expect(second.body.data!.passes!.pageInfo.hasPreviousPage).toBe(true);

    const last = await queryPasses(reseller, { last: 10, before: second.body.data!.passes!.pageInfo.startCursor });
    expect(nodeIds(last)).toEqual(all.slice(0, 4));
    expect(last.body.data!.passes!.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: all[0], endCursor: all[3] });
  });

  it('last without before › answers the oldest items, in list order', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 5);
    const res = await queryPasses(reseller, { last: 2 });
    expect(res.body.errors).toBeUndefined();
    expect(nodeIds(res)).toEqual(all.slice(3));
    expect(res.body.data!.passes!.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: all[3], endCursor: all[4] });
  });

  it('cursors › are the same ids the REST list pages with', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 6);
    const rest = await listPasses(reseller, `?limit=2&starting_after=${all[1]}`);
    const graph = await queryPasses(reseller, { first: 2, after: all[1] });
    expect(nodeIds(graph)).toEqual(ids(rest));
    expect(nodeIds(graph)).toEqual(all.slice(2, 4));
  });

  it("another reseller's passes › never appear in the connection", async () => {
    const reseller = await createReseller(app);
    const other = await createReseller(app);
    const own = await createPasses(reseller, 2);
    await createPasses(other, 2);
    expect(nodeIds(await queryPasses(reseller, { first: 100 }))).toEqual(own);
  });

  it('first and last together › answers a validation_error', async () => {
    const reseller = await createReseller(app);
    await createPasses(reseller, 2);
    expectGraphQLError(await queryPasses(reseller, { first: 1, last: 1 }), 'validation_error');
  });

  it('after and before together › answers a validation_error', async () => {
    const reseller = await createReseller(app);
    const all = await createPasses(reseller, 3);
    expectGraphQLError(await queryPasses(reseller, { after: all[0], before: all[2] }), 'validation_error');
  });

  for (const [situation, variables, param] of [
    ['first 101', { first: 101 }, 'first'],
    ['first 0', { first: 0 }, 'first'],
    ['last 101', { last: 101 }, 'last'],
    ['a negative last', { last: -1 }, 'last'],
  ] as const) {
    it(`${situation} › answers a validation_error naming ${param}`, async () => {
      const reseller = await createReseller(app);
      await createPasses(reseller, 2);
      expectGraphQLError(await queryPasses(reseller, variables), 'validation_error', param);
    });
  }

  for (const cursorArg of ['after', 'before'] as const) {
    const paging = cursorArg === 'after' ? { first: 5 } : { last: 5 };

    it(`a malformed ${cursorArg} cursor › answers invalid_cursor`, async () => {
      const reseller = await createReseller(app);
      await createPasses(reseller, 2);
      expectGraphQLError(await queryPasses(reseller, { ...paging, [cursorArg]: 'not-a-cursor' }), 'invalid_cursor');
    });

    it(`${cursorArg} with an id of another kind › answers invalid_cursor`, async () => {
      const reseller = await createReseller(app);
      const [pass] = await createPasses(reseller, 2);
      const issued = await issuePass(app, reseller, pass);
      expectGraphQLError(await queryPasses(reseller, { ...paging, [cursorArg]: issued.client_id }), 'invalid_cursor');
    });

    it(`${cursorArg} with another reseller's pass id › answers invalid_cursor`, async () => {
      const reseller = await createReseller(app);
      const other = await createReseller(app);
      await createPasses(reseller, 2);
      const [foreign] = await createPasses(other, 1);
      expectGraphQLError(await queryPasses(reseller, { ...paging, [cursorArg]: foreign }), 'invalid_cursor');
    });
  }
});
