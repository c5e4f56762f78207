import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp, type TestApp } from '../support/app.ts';
import {
  createCreditPackage,
  expectChainNewestFirst,
  purchased,
  walletRowsInBalanceOrder,
  type TestCreditPackage,
} from '../support/credits.ts';
import { businessLedger, createPassPackage, createReseller, issuePass, walletLedger, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { killStartedProcesses, Service } from '../ops/processes.ts';

// "Newest first" in a wallet is the order its balance moved (docs/domain-rules.md "Money"): a wallet row's id
// is made before its statement waits for the client row's lock, so it cannot be the order. Here
// two processes share one database: this file's app, whose clock runs a day ahead, and a `serve`
// on the real clock. Ids the app makes sort after every id the other process makes, whatever
// happened first, so id order and balance order part; the listed order must follow balance_after.

const app = useApp({}, { now: new Date(Date.now() + 24 * 3600_000) });
const T = 120_000;

let serve: Service;
let other: TestApp;
let reseller: TestReseller;
let pkg: TestCreditPackage;

beforeAll(async () => {
  reseller = await createReseller(app, { balance: 10_000_000 });
  pkg = await createCreditPackage(app, reseller, { credits: 10, price: 100 });
  serve = new Service(['serve'], { DATABASE_URL: app.databaseUrl, PORT: '0', OUTBOX_IN_PROCESS: 'false' });
  await serve.waitForStdout(/"msg":"listening"/, 90_000);
  other = { baseUrl: serve.logLines().find((l) => l.msg === 'listening')!.url as string } as TestApp;
}, T);
afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exited;
  await killStartedProcesses();
}, T);

let emails = 0;
const newClient = async () =>
  (await issuePass(app, reseller, (await createPassPackage(app, reseller, { price: 0 })).id, { email: `order.${++emails}@example.com` }))
    .client_id;

/** What both processes list for the client, REST and GraphQL: every row, newest first in balance order. */
async function expectListedInBalanceOrder(clientId: string, count: number) {
  const inBalanceOrder = (await walletRowsInBalanceOrder(app, clientId)).reverse();
  expect(inBalanceOrder).toHaveLength(count);
  expectChainNewestFirst(inBalanceOrder, 'seq order');
  const { balance } = await walletLedger(app, clientId);
  for (const server of [app, other]) {
    const res = await v3(server, `/clients/${clientId}/credits?limit=100`, { key: reseller.key });
    expect(res.status, res.text).toBe(200);
    expect(res.body.balance).toBe(balance);
    expect(res.body.transactions.map((t: { id: string }) => t.id)).toEqual(inBalanceOrder.map((r) => r.id));
    expect(res.body.transactions[0].balance_after).toBe(balance);
    expectChainNewestFirst(res.body.transactions, `REST of ${server.baseUrl}`);
    // A page boundary in the middle: the next page continues the balance.
    const first = await v3(server, `/clients/${clientId}/credits?limit=3`, { key: reseller.key });
    const next = await v3(server, `/clients/${clientId}/credits?limit=3&starting_after=${first.body.transactions[2].id}`, {
      key: reseller.key,
    });
    expect([...first.body.transactions, ...next.body.transactions].map((t: { id: string }) => t.id)).toEqual(
      inBalanceOrder.slice(0, 6).map((r) => r.id),
    );
  }
  const res = await gql(
    app,
    reseller.key,
    `query($id: ID!) { client(id: $id) { credits { balance transactions(first: 100) {
    edges { node { id type amount balanceAfter } } } } } }`,
    { id: clientId },
  );
  const nodes = res.body.data.client.credits.transactions.edges.map((e: { node: Record<string, any> }) => e.node);
  expect(nodes.map((n: { id: string }) => n.id)).toEqual(inBalanceOrder.map((r) => r.id));
  expectChainNewestFirst(
    nodes.map((n: Record<string, any>) => ({ type: n.type, amount: n.amount, balance_after: n.balanceAfter })),
    'GraphQL',
  );
  return inBalanceOrder;
}

/** Whether id order is not the order the balance moved: the case this file exists for. */
async function idOrderDiffers(clientId: string): Promise<boolean> {
  const byId = await app.sql<{ id: string }>('select id from credit_transaction where client_id = ? order by id', [clientId]);
  const bySeq = await walletRowsInBalanceOrder(app, clientId);
  return byId.map((r) => r.id).join() !== bySeq.map((r) => r.id).join();
}

describe('wallet order across two processes', () => {
  it(
    'a purchase on the app, then one on the other process › the later one has the smaller id; both list it first',
    async () => {
      const clientId = await newClient(); // the pass's 50 credits, made by the app
      const a = await purchased(app, reseller, clientId, pkg.id);
      const b = await purchased(other, reseller, clientId, pkg.id, `order-b-${clientId}`);
      expect([a.balance, b.balance]).toEqual([60, 70]);
      expect(await idOrderDiffers(clientId)).toBe(true);
      const listed = await expectListedInBalanceOrder(clientId, 3);
      expect(listed.map((r) => r.balance_after)).toEqual([70, 60, 50]);
    },
    T,
  );

  it(
    '20 concurrent purchases for one client, alternating between the processes › listed in balance order on both surfaces',
    async () => {
      const clientId = await newClient();
      const before = await businessLedger(app, reseller.id);
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          v3(i % 2 === 0 ? app : other, '/credit_purchases', {
            key: reseller.key,
            body: { client_id: clientId, credit_package_id: pkg.id },
            idempotencyKey: `race-${clientId}-${i}`,
          }),
        ),
      );
      expect(
        replies.map((r) => r.status),
        replies.map((r) => r.text).join('\n'),
      ).toEqual(Array(20).fill(201));
      expect(replies.map((r) => r.body.balance).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => 60 + 10 * i));
      expect(await walletLedger(app, clientId)).toEqual({ balance: 250, ledgerSum: 250 });
      expect(await businessLedger(app, reseller.id)).toEqual({
        balance: before.balance - 2000,
        ledgerSum: before.balance - 2000,
        rows: before.rows + 20,
      });
      expect(await idOrderDiffers(clientId)).toBe(true);
      await expectListedInBalanceOrder(clientId, 21);
    },
    T,
  );
});
