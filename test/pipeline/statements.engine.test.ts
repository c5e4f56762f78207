import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// SQL statements per request on the hottest paths (bench/README.md has the figures): they must not
// grow with the page size, and a page with a cursor checks the cursor in the same statement.
const app = useApp();

/** The request's own statements: the API-key lookup (once per 500 ms per key) is left out. */
const own = () => app.queries!.ownCount;

async function statementsOf(request: () => Promise<unknown>): Promise<number> {
  await request();
  app.queries!.reset();
  await request();
  return own();
}

describe('GET /passes', () => {
  it('one statement for a page of 10 and of 100, with provider counts and with a cursor', async () => {
    const reseller = await createReseller(app);
    const passes: { id: string }[] = [];
    for (let i = 0; i < 30; i++) passes.push(await createPassPackage(app, reseller, { name: `Pass ${i}` }));
    expect(await statementsOf(() => v3(app, '/passes?limit=10', { key: reseller.key }))).toBe(1);
    expect(await statementsOf(() => v3(app, '/passes?limit=100', { key: reseller.key }))).toBe(1);
    expect(await statementsOf(() => v3(app, `/passes?limit=5&starting_after=${passes[20].id}`, { key: reseller.key }))).toBe(1);
    expect(await statementsOf(() => v3(app, `/passes?limit=5&ending_before=${passes[3].id}`, { key: reseller.key }))).toBe(1);
  });

  it('a cursor of another reseller › 400 invalid_cursor, also where the page would not be empty', async () => {
    const reseller = await createReseller(app);
    const other = await createReseller(app);
    for (let i = 0; i < 3; i++) await createPassPackage(app, reseller);
    const foreign = await createPassPackage(app, other);
    for (const cursor of [`starting_after=${foreign.id}`, `ending_before=${foreign.id}`]) {
      const res = await v3(app, `/passes?${cursor}`, { key: reseller.key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: cursor.split('=')[0] });
    }
  });

  it('the last page reached with a valid cursor › empty, has_more false (the empty page still checks the cursor)', async () => {
    const reseller = await createReseller(app);
    const first = await createPassPackage(app, reseller);
    await createPassPackage(app, reseller);
    const res = await v3(app, `/passes?starting_after=${first.id}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: [], has_more: false });
  });
});

describe('GraphQL passes', () => {
  // The list reads categories (jsonb) and created_at only when the nodes select the fields behind
  // them, in the same one statement (src/graphql/selection.ts): fragments at any level count.
  it('one statement; categories and createdAt read only when selected, through fragments too, with the values GET /passes shows', async () => {
    const reseller = await createReseller(app);
    for (let i = 0; i < 12; i++) await createPassPackage(app, reseller, { name: `Pass ${i}` });
    const { body: rest } = await v3(app, '/passes?limit=10', { key: reseller.key });
    const send = async (query: string) => {
      app.queries!.reset();
      const res = await gql(app, reseller.key, query);
      expect(res.body.errors, res.text).toBeUndefined();
      const sql = app.queries!.statements.filter((q) => !/\bfrom api_key\b/.test(q));
      expect(sql).toHaveLength(1);
      const nodes = (res.body.data.passes.edges as { node: Record<string, unknown> }[]).map((e) => e.node);
      expect(nodes.map((n) => n.id)).toEqual(rest.data.map((p: { id: string }) => p.id));
      return { reads: { categories: /\bcategories\b/.test(sql[0]), createdAt: /\bcreated_at\b/.test(sql[0]) }, nodes };
    };
    // Each query twice: the second run resolves with the cached document's nodes, and the selection
    // read from them is kept per node (src/graphql/selection.ts), so it must read the same columns.
    const list = async (query: string) => {
      const first = await send(query);
      expect(await send(query)).toEqual(first);
      return first;
    };
    const bare = await list('{ passes(first: 10) { edges { node { id name price } } } }');
    expect(bare.reads).toEqual({ categories: false, createdAt: false });
    expect(bare.nodes.map((n) => [n.name, n.price])).toEqual(rest.data.map((p: { name: string; price: number }) => [p.name, p.price]));

    const whole = await list(
      '{ passes(first: 10) { edges { node { id categories { type tiers visitsAllowed creditAllocated } createdAt } } } }',
    );
    expect(whole.reads).toEqual({ categories: true, createdAt: true });
    expect(whole.nodes.map((n) => Date.parse(n.createdAt as string) / 1000)).toEqual(rest.data.map((p: { created: number }) => p.created));
    expect(whole.nodes.map((n) => n.categories)).toEqual(
      rest.data.map((p: { categories: { type: string; tiers: string[]; visits_allowed: number | null; credit_allocated: number }[] }) =>
        p.categories.map((c) => ({ type: c.type, tiers: c.tiers, visitsAllowed: c.visits_allowed, creditAllocated: c.credit_allocated })),
      ),
    );

    const inline = await list('{ passes(first: 10) { edges { node { id ... on Pass { categories { type } } } } } }');
    expect(inline.reads).toEqual({ categories: true, createdAt: false });
    const spread = await list(`{ passes(first: 10) { ...Page } }
      fragment Page on QueryPassesConnection { edges { ... { node { id ...Dates } } } }
      fragment Dates on Pass { createdAt }`);
    expect(spread.reads).toEqual({ categories: false, createdAt: true });
    expect(spread.nodes.map((n) => n.createdAt)).toEqual(whole.nodes.map((n) => n.createdAt));
    // The same field twice with different selections is merged: both selections count.
    const merged = await list('{ passes(first: 10) { edges { node { id } } } passes(first: 10) { edges { node { createdAt } } } }');
    expect(merged.reads).toEqual({ categories: false, createdAt: true });
  });
});

describe('POST /issued_passes with an Idempotency-Key', () => {
  // The key costs no statement of its own: the record is written with the response as the
  // transaction's last statement (src/platform/idempotency.ts), no claim ahead of the use case, no
  // savepoint, and the event and its outbox row ride in it (src/db/engine/prepared-read.ts
  // queueWrite). PREPAID: BEGIN, the pass, the client, the issued pass, then the record with what
  // the use case queued riding in it (the business account's ledger row, whose balance moves at
  // COMMIT; the wallet's credit, moved by its row's trigger; the event and its outbox row), COMMIT.
  // GraphQL adds the mutation field's savepoint, at whose end the queued writes are sent on their
  // own and the business ledger row is settled (SET CONSTRAINTS … IMMEDIATE), so that an overdraft
  // is that field's answer; PAYG has nothing to settle.
  it('6 statements for a PREPAID pass with wallet credits, 6 for PAYG without; GraphQL issuePass three and two more', async () => {
    const reseller = await createReseller(app, { balance: 1_000_000 });
    const prepaid = await createPassPackage(app, reseller, { paymentModel: 'PREPAID' });
    const payg = await createPassPackage(app, reseller, {
      paymentModel: 'PAYG',
      categories: [{ type: 'GYM', tiers: ['SILVER'], visits_allowed: 8, credit_allocated: 0 }],
    });
    let n = 0;
    const body = (passId: string) => ({ pass_id: passId, first_name: 'A', last_name: 'B', email: `s${++n}@example.com` });
    const rest = (passId: string) => async () => {
      const res = await v3(app, '/issued_passes', { key: reseller.key, idempotencyKey: `stmt-${n}`, body: body(passId) });
      expect(res.status, res.text).toBe(201);
    };
    const graphql = (passId: string) => async () => {
      const { pass_id, first_name, last_name, email } = body(passId);
      const res = await gql(
        app,
        reseller.key,
        'mutation Issue($input: IssuePassInput!) { issuePass(input: $input) { __typename } }',
        { input: { passId: pass_id, firstName: first_name, lastName: last_name, email } },
        { idempotencyKey: `stmt-${n}` },
      );
      expect(res.body.data?.issuePass.__typename, res.text).toBe('IssuedPassPayload');
    };
    expect(await statementsOf(rest(prepaid.id))).toBe(6);
    expect(await statementsOf(rest(payg.id))).toBe(6);
    expect(await statementsOf(graphql(prepaid.id))).toBe(9);
    expect(await statementsOf(graphql(payg.id))).toBe(8);
  });
});
