import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectGraphQLError, expectValidationError } from '../support/assertions.ts';
import { anotherClient, book, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { createCreditPackage, expectChainNewestFirst, purchased, walletRowsInBalanceOrder, type WalletRow } from '../support/credits.ts';
import { createPassPackage, createReseller, issuePass } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// GET /clients/{client_id}/credits and GraphQL Client.credits (docs/partner-guide.md "Credits"): the balance and
// the wallet's rows newest first (the order the balance moved in), the 20 most recent by default,
// older (or newer) ones with limit, starting_after and ending_before; a page of clients costs no
// statement per client.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
const T = 60_000;

let w: BookingWorld;
/** The world client's wallet rows, newest first, as the database has them. */
let rows: WalletRow[];
let bookingId: string;
let othersRow: string;

beforeAll(async () => {
  w = await createBookingWorld(app);
  // The pass granted 50 credits; a covered spa booking spends 30 and its cancel gives them back.
  const booked = await book.spa(app, w, {
    date: '2026-03-10',
    time: '10:00',
    spa_id: w.spa.id,
    service_ids: [w.spa.massage],
    client_id: w.client.id,
  });
  expect(booked.body, booked.text).toMatchObject({ status: 'PENDING' });
  bookingId = booked.body.booking_id;
  app.clock.advance(1000);
  expect((await v3(app, `/bookings/${bookingId}/cancel`, { key: w.reseller.key, method: 'POST' })).status).toBe(200);
  const packages = [
    await createCreditPackage(app, w.reseller, { credits: 5, price: 100 }),
    await createCreditPackage(app, w.reseller, { credits: 7, price: 140 }),
  ];
  for (let i = 0; i < 22; i++) {
    app.clock.advance(1000);
    await purchased(app, w.reseller, w.client.id, packages[i % 2].id);
  }
  rows = (await walletRowsInBalanceOrder(app, w.client.id)).reverse();
  expect(rows).toHaveLength(25);
  const other = await anotherClient(app, w);
  othersRow = (await walletRowsInBalanceOrder(app, other.id))[0].id;
}, T);

const credits = (query = '', clientId = w.client.id, key = w.reseller.key) => v3(app, `/clients/${clientId}/credits${query}`, { key });
const ids = (list: { id: string }[]) => list.map((t) => t.id);

describe('GET /clients/{client_id}/credits', () => {
  it('answers the credit_balance: the balance, the currency and the 20 most recent transactions, newest first', async () => {
    const res = await credits();
    expect(res.status, res.text).toBe(200);
    const balance = 50 + 11 * 5 + 11 * 7;
    expect(res.body).toMatchObject({ object: 'credit_balance', client_id: w.client.id, balance, currency: 'EUR', has_more: true });
    expect(ids(res.body.transactions)).toEqual(ids(rows.slice(0, 20)));
    expect(res.body.transactions[0].balance_after).toBe(balance);
    expectChainNewestFirst(res.body.transactions, 'first page', rows[20].balance_after);
    // The newest is a purchase: it names it; no booking.
    const [purchaseId] = (
      await app.sql<{ id: string }>('select id from credit_purchase where credit_transaction_id = ?', [rows[0].id])
    ).map((r) => r.id);
    expect(res.body.transactions[0]).toEqual({
      id: rows[0].id,
      type: 'CREDIT',
      amount: 7,
      balance_after: balance,
      description: expect.stringContaining('Credit package'),
      booking_id: null,
      credit_purchase_id: purchaseId,
      created: Math.floor(new Date('2026-03-02T08:00:23Z').getTime() / 1000),
    });
  });

  it('the oldest rows: the pass’s credits, the booking’s debit and its refund, each naming the booking', async () => {
    const res = await credits('?limit=100');
    expect(res.body.has_more).toBe(false);
    expect(ids(res.body.transactions)).toEqual(ids(rows));
    expectChainNewestFirst(res.body.transactions, 'whole wallet');
    expect(res.body.transactions.slice(-3).reverse()).toEqual([
      expect.objectContaining({ type: 'CREDIT', amount: 50, balance_after: 50, booking_id: null, credit_purchase_id: null }),
      expect.objectContaining({ type: 'DEBIT', amount: 30, balance_after: 20, booking_id: bookingId, credit_purchase_id: null }),
      expect.objectContaining({ type: 'CREDIT', amount: 30, balance_after: 50, booking_id: bookingId, credit_purchase_id: null }),
    ]);
  });

  it('pages older rows with starting_after and newer ones with ending_before; has_more in the direction of paging', async () => {
    const older = await credits(`?starting_after=${rows[19].id}`);
    expect(ids(older.body.transactions)).toEqual(ids(rows.slice(20)));
    expect(older.body.has_more).toBe(false);
    expect(older.body.balance).toBe(rows[0].balance_after);
    const page = await credits(`?limit=4&starting_after=${rows[5].id}`);
    expect(ids(page.body.transactions)).toEqual(ids(rows.slice(6, 10)));
    expect(page.body.has_more).toBe(true);
    const newer = await credits(`?limit=4&ending_before=${rows[6].id}`);
    expect(ids(newer.body.transactions)).toEqual(ids(rows.slice(2, 6)));
    expect(newer.body.has_more).toBe(true);
    const newest = await credits(`?limit=4&ending_before=${rows[3].id}`);
    expect(ids(newest.body.transactions)).toEqual(ids(rows.slice(0, 3)));
    expect(newest.body.has_more).toBe(false);
    const small = await credits('?limit=1');
    expect(ids(small.body.transactions)).toEqual([rows[0].id]);
    expect(small.body.has_more).toBe(true);
  });

  it('a client without wallet rows › balance 0, no transactions', async () => {
    const r = await createReseller(app);
    const clientId = (await issuePass(app, r, (await createPassPackage(app, r, { categories: [] })).id)).client_id;
    const res = await v3(app, `/clients/${clientId}/credits`, { key: r.key });
    expect(res.body).toEqual({
      object: 'credit_balance',
      client_id: clientId,
      balance: 0,
      currency: 'EUR',
      transactions: [],
      has_more: false,
    });
  });

  it('bad paging input › 400 naming it; a cursor of another wallet › 400 invalid_cursor', async () => {
    for (const limit of ['0', '101', 'x']) expectValidationError(await credits(`?limit=${limit}`), 'limit');
    expectValidationError(await credits(`?starting_after=${rows[1].id}&ending_before=${rows[5].id}`), 'ending_before');
    expectValidationError(await credits('?page=2'), 'page');
    expectError(await credits(`?starting_after=${othersRow}`), 400, 'invalid_cursor', 'starting_after');
    expectError(await credits(`?ending_before=${bookingId}`), 400, 'invalid_cursor', 'ending_before');
    expectError(await credits('?starting_after=ctxn_nope'), 400, 'invalid_cursor', 'starting_after');
  });

  it('another reseller’s, an unknown or a malformed client › 404', async () => {
    const other = await createReseller(app);
    expectError(await credits('', w.client.id, other.key), 404, 'resource_not_found');
    expectError(await credits('', 'client_01JHMK1SM0FAQ48HC5DFDQNTWY'), 404, 'resource_not_found');
    expectError(await credits('', 'nobody'), 404, 'resource_not_found');
    // The client is checked before the cursor.
    expectError(await credits(`?starting_after=${rows[0].id}`, w.client.id, other.key), 404, 'resource_not_found');
  });
});

describe('GraphQL Client.credits', () => {
  const CREDITS = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { client(id: $id) { credits {
    balance currency transactions(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id type amount balanceAfter description bookingId creditPurchaseId createdAt } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } } }`;
  const asV3 = (n: Record<string, any>) => ({
    id: n.id,
    type: n.type,
    amount: n.amount,
    balance_after: n.balanceAfter,
    description: n.description,
    booking_id: n.bookingId,
    credit_purchase_id: n.creditPurchaseId,
    created: Math.floor(new Date(n.createdAt).getTime() / 1000),
  });

  it('answers what REST answers: the balance, the currency and the same transactions in the same order', async () => {
    const rest = await credits();
    const res = await gql(app, w.reseller.key, CREDITS, { id: w.client.id, first: 20 });
    expect(res.body.errors, res.text).toBeUndefined();
    const c = res.body.data.client.credits;
    expect({ balance: c.balance, currency: c.currency }).toEqual({ balance: rest.body.balance, currency: rest.body.currency });
    expect(c.transactions.edges.map((e: { node: Record<string, any> }) => asV3(e.node))).toEqual(rest.body.transactions);
    expect(c.transactions.edges.map((e: { cursor: string }) => e.cursor)).toEqual(ids(rows.slice(0, 20)));
    expect(c.transactions.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('pages with first/after and last/before as REST does with its cursors', async () => {
    const after = await gql(app, w.reseller.key, CREDITS, { id: w.client.id, first: 4, after: rows[5].id });
    expect(after.body.data.client.credits.transactions.edges.map((e: { cursor: string }) => e.cursor)).toEqual(ids(rows.slice(6, 10)));
    const before = await gql(app, w.reseller.key, CREDITS, { id: w.client.id, last: 4, before: rows[6].id });
    expect(before.body.data.client.credits.transactions.edges.map((e: { cursor: string }) => e.cursor)).toEqual(ids(rows.slice(2, 6)));
    const oldest = await gql(app, w.reseller.key, CREDITS, { id: w.client.id, last: 2 });
    expect(oldest.body.data.client.credits.transactions.edges.map((e: { cursor: string }) => e.cursor)).toEqual(ids(rows.slice(23)));
    const rest = await credits(`?limit=4&starting_after=${rows[5].id}`);
    expect(after.body.data.client.credits.transactions.edges.map((e: { node: Record<string, any> }) => asV3(e.node))).toEqual(
      rest.body.transactions,
    );
  });

  it('a bad page size or another wallet’s cursor › an error naming the argument', async () => {
    expectGraphQLError(await gql(app, w.reseller.key, CREDITS, { id: w.client.id, first: 0 }), 'validation_error', 'first');
    expectGraphQLError(await gql(app, w.reseller.key, CREDITS, { id: w.client.id, after: othersRow }), 'invalid_cursor', 'after');
  });

  it(
    'a page of clients › the same statements as one client (no statement per client)',
    async () => {
      const clients = [w.client.id];
      for (let i = 0; i < 5; i++) {
        const c = await anotherClient(app, w, `page.${i}@example.com`);
        clients.push(c.id);
      }
      const pkg = await createCreditPackage(app, w.reseller, { credits: 3, price: 10 });
      for (const id of clients.slice(1)) await purchased(app, w.reseller, id, pkg.id);
      const query = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Client { id credits { balance currency
      transactions(first: 2) { edges { node { id amount balanceAfter } } pageInfo { hasNextPage } } } } } }`;
      const counted = async (ids: string[]) => {
        app.queries!.reset();
        const res = await gql(app, w.reseller.key, query, { ids });
        expect(res.body.errors, res.text).toBeUndefined();
        return { res, statements: app.queries!.ownCount };
      };
      const one = await counted(clients.slice(0, 1));
      const six = await counted(clients);
      expect(six.statements).toBe(one.statements);
      const nodes = six.res.body.data.nodes;
      expect(nodes.map((n: { id: string }) => n.id)).toEqual(clients);
      for (const n of nodes.slice(1)) {
        expect(n.credits).toMatchObject({ balance: 53, currency: 'EUR', transactions: { pageInfo: { hasNextPage: false } } });
        expect(n.credits.transactions.edges.map((e: { node: Record<string, unknown> }) => [e.node.amount, e.node.balanceAfter])).toEqual([
          [3, 53],
          [50, 50],
        ]);
      }
      expect(nodes[0].credits.transactions.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids(rows.slice(0, 2)));
    },
    T,
  );
});
