import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { createCreditPackage, purchase, purchased, type TestCreditPackage } from '../support/credits.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, createPassPackage, createReseller, issuePass, walletLedger, type TestReseller } from '../support/factories.ts';
import { gql, v3, type Reply } from '../support/http.ts';

// POST /credit_purchases and GraphQL purchaseCredits (docs/partner-guide.md "Credits"): one transaction debits
// the business account the package's price and credits the client's wallet its credits, a ledger
// row each referencing the purchase, with the purchase row and its credits.purchased event.
// Refused requests write nothing; the same Idempotency-Key moves money once.

const NOW = '2026-05-04T10:00:00Z';
const app = useApp({}, { now: new Date(NOW) });
const T = 60_000;

let reseller: TestReseller;
let passId: string;
let pkg: TestCreditPackage;
let other: TestReseller;
let othersClient: string;
let othersPackage: TestCreditPackage;

beforeAll(async () => {
  reseller = await createReseller(app, { balance: 1_000_000 });
  // The default pass grants 50 credits a period: every new client starts with 50.
  passId = (await createPassPackage(app, reseller, { price: 0 })).id;
  pkg = await createCreditPackage(app, reseller, { name: 'Plus', credits: 120, price: 5500 });
  other = await createReseller(app, { balance: 1_000_000 });
  othersClient = (await issuePass(app, other, (await createPassPackage(app, other)).id)).client_id;
  othersPackage = await createCreditPackage(app, other, { credits: 10, price: 100 });
});

let emails = 0;
const newClient = async (r = reseller, pass = passId) =>
  (await issuePass(app, r, pass, { email: `buyer.${++emails}@example.com` })).client_id;
const body = (clientId: string, packageId = pkg.id) => ({ client_id: clientId, credit_package_id: packageId });

/** The ledger rows and purchase rows a purchase left. */
async function rowsOf(purchaseId: string) {
  return {
    business: await app.sql(
      'select reseller_id, type, amount::int, balance_after::int, reference_id from business_transaction where reference_id = ?',
      [purchaseId],
    ),
    wallet: await app.sql(
      'select reseller_id, client_id, type, amount::int, balance_after::int, credit_purchase_id, booking_id from credit_transaction where credit_purchase_id = ?',
      [purchaseId],
    ),
    purchase: await app.sql(
      `select reseller_id, client_id, credit_package_id, credits::int, amount::int, currency, balance_after::int,
      business_transaction_id, credit_transaction_id from credit_purchase where id = ?`,
      [purchaseId],
    ),
  };
}

describe('POST /credit_purchases', () => {
  it('debits the business account the price, credits the wallet, a ledger row each referencing the purchase; answers the credit_purchase', async () => {
    const clientId = await newClient();
    const business = await businessLedger(app, reseller.id);
    const outbox = await lastOutboxId(app);
    const res = await purchase(app, reseller, body(clientId), 'buy-1');
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      object: 'credit_purchase',
      id: expect.stringMatching(/^cpur_[0-9A-Z]{26}$/),
      client_id: clientId,
      credit_package_id: pkg.id,
      credits: 120,
      amount: 5500,
      currency: 'EUR',
      balance: 170,
      created: unix(NOW),
    });
    const id = res.body.id;

    const rows = await rowsOf(id);
    const [businessRow] = await app.sql<{ id: string }>('select id from business_transaction where reference_id = ?', [id]);
    const [walletRow] = await app.sql<{ id: string }>('select id from credit_transaction where credit_purchase_id = ?', [id]);
    expect(rows).toEqual({
      business: [{ reseller_id: reseller.id, type: 'DEBIT', amount: 5500, balance_after: business.balance - 5500, reference_id: id }],
      wallet: [
        {
          reseller_id: reseller.id,
          client_id: clientId,
          type: 'CREDIT',
          amount: 120,
          balance_after: 170,
          credit_purchase_id: id,
          booking_id: null,
        },
      ],
      purchase: [
        {
          reseller_id: reseller.id,
          client_id: clientId,
          credit_package_id: pkg.id,
          credits: 120,
          amount: 5500,
          currency: 'EUR',
          balance_after: 170,
          business_transaction_id: businessRow.id,
          credit_transaction_id: walletRow.id,
        },
      ],
    });
    // Both ledgers still sum to their balances.
    expect(await businessLedger(app, reseller.id)).toEqual({
      balance: business.balance - 5500,
      ledgerSum: business.balance - 5500,
      rows: business.rows + 1,
    });
    expect(await walletLedger(app, clientId)).toEqual({ balance: 170, ledgerSum: 170 });
    // The client shows the new balance.
    expect((await v3(app, `/clients/${clientId}`, { key: reseller.key })).body.credit_balance).toBe(170);

    // credits.purchased, in the same transaction: the answered credit_purchase, for this request.
    const events = await outboxSince(app, outbox);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ topic: 'event', reseller_id: reseller.id });
    expect(events[0].payload).toMatchObject({
      object: 'event',
      type: 'credits.purchased',
      created: unix(NOW),
      data: { object: res.body },
      request: { id: res.headers.get('request-id'), idempotency_key: 'buy-1' },
    });
  });

  it('a second purchase adds to the balance; without an Idempotency-Key too', async () => {
    const clientId = await newClient();
    const small = await createCreditPackage(app, reseller, { credits: 7, price: 350 });
    expect((await purchased(app, reseller, clientId, small.id)).balance).toBe(57);
    expect((await purchased(app, reseller, clientId, pkg.id)).balance).toBe(177);
    expect(await walletLedger(app, clientId)).toEqual({ balance: 177, ledgerSum: 177 });
  });

  it('the same Idempotency-Key again › the first response byte for byte, replayed, and no second debit; another body › 409', async () => {
    const clientId = await newClient();
    const otherClient = await newClient();
    const first = await purchase(app, reseller, body(clientId), 'replay-1');
    expect(first.status).toBe(201);
    const business = await businessLedger(app, reseller.id);
    const before = await dbState(app);
    const again = await purchase(app, reseller, body(clientId), 'replay-1');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('x-idempotent-replayed')).toBe('true');
    expect(first.headers.get('x-idempotent-replayed')).toBeNull();
    await expectUnchanged(app, before);
    expect(await businessLedger(app, reseller.id)).toEqual(business);
    expect(await app.sql('select id from credit_purchase where client_id = ?', [clientId])).toEqual([{ id: first.body.id }]);
    expectError(await purchase(app, reseller, body(otherClient), 'replay-1'), 409, 'idempotency_key_reused');
    await expectUnchanged(app, before);
  });

  it(
    '10 at once with one Idempotency-Key › one purchase, one debit, one credit, one event; every 201 the same bytes',
    async () => {
      const clientId = await newClient();
      const business = await businessLedger(app, reseller.id);
      const outbox = await lastOutboxId(app);
      const replies = await Promise.all(Array.from({ length: 10 }, () => purchase(app, reseller, body(clientId), `same-${clientId}`)));
      // A request that waited longer than IDEMPOTENCY_WAIT_MS may answer 409 in progress; nothing else.
      for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 409, 'idempotency_request_in_progress');
      const created = replies.filter((r) => r.status === 201);
      expect(new Set(created.map((r) => r.text)).size).toBe(1);
      expect(created.filter((r) => r.headers.get('x-idempotent-replayed') !== 'true')).toHaveLength(1);
      const id = created[0].body.id;
      expect(await app.sql('select id from credit_purchase where client_id = ?', [clientId])).toEqual([{ id }]);
      expect(await businessLedger(app, reseller.id)).toEqual({
        balance: business.balance - 5500,
        ledgerSum: business.balance - 5500,
        rows: business.rows + 1,
      });
      expect(await walletLedger(app, clientId)).toEqual({ balance: 170, ledgerSum: 170 });
      expect((await outboxSince(app, outbox)).map((e) => [e.payload.type, e.payload.data.object.id])).toEqual([['credits.purchased', id]]);
    },
    T,
  );

  it(
    '10 at once with different keys › 10 purchases; both ledgers sum to their balances',
    async () => {
      const clientId = await newClient();
      const business = await businessLedger(app, reseller.id);
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) => purchase(app, reseller, body(clientId), `many-${clientId}-${i}`)),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
      expect(replies.map((r) => r.body.balance).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => 50 + 120 * (i + 1)));
      expect(await businessLedger(app, reseller.id)).toEqual({
        balance: business.balance - 55_000,
        ledgerSum: business.balance - 55_000,
        rows: business.rows + 10,
      });
      expect(await walletLedger(app, clientId)).toEqual({ balance: 1250, ledgerSum: 1250 });
    },
    T,
  );

  it('a business account that cannot pay › 422 insufficient_balance and nothing written; the same key replays the 422', async () => {
    const poor = await createReseller(app, { balance: 5499 });
    const poorPass = (await createPassPackage(app, poor, { price: 0 })).id;
    const clientId = await newClient(poor, poorPass);
    const expensive = await createCreditPackage(app, poor, { credits: 120, price: 5500 });
    const before = await dbState(app);
    const res = await purchase(app, poor, body(clientId, expensive.id), 'poor-1');
    expectError(res, 422, 'insufficient_balance');
    await expectUnchanged(app, before);
    const replay = await purchase(app, poor, body(clientId, expensive.id), 'poor-1');
    expect(replay.text).toBe(res.text);
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    await expectUnchanged(app, before);
    expect(await businessLedger(app, poor.id)).toEqual({ balance: 5499, ledgerSum: 5499, rows: 1 });
  });

  it('exactly the balance › paid, leaving 0', async () => {
    const exact = await createReseller(app, { balance: 5500 });
    const clientId = await newClient(exact, (await createPassPackage(app, exact, { price: 0 })).id);
    const p = await createCreditPackage(app, exact, { credits: 120, price: 5500 });
    expect((await purchased(app, exact, clientId, p.id)).balance).toBe(170);
    expect(await businessLedger(app, exact.id)).toEqual({ balance: 0, ledgerSum: 0, rows: 2 });
  });

  it('another reseller’s or an unknown client or package › 404 resource_not_found naming the field, nothing written', async () => {
    const clientId = await newClient();
    const before = await dbState(app);
    const cases: [Record<string, unknown>, string][] = [
      [body(othersClient), 'client_id'],
      [body('client_01JHMK1SM0FAQ48HC5DFDQNTWY'), 'client_id'],
      [body('not-an-id'), 'client_id'],
      [body(clientId, othersPackage.id), 'credit_package_id'],
      [body(clientId, 'cpkg_01JHMK1SM0FAQ48HC5DFDQNTWY'), 'credit_package_id'],
      [body(clientId, passId), 'credit_package_id'],
      // Both wrong: the client is named first.
      [body(othersClient, othersPackage.id), 'client_id'],
    ];
    for (const [b, param] of cases) {
      expectError(await purchase(app, reseller, b, `nf-${JSON.stringify(b)}`), 404, 'resource_not_found', param);
    }
    await expectUnchanged(app, before);
  });

  it('bad input › 400 validation_error naming the field, nothing written', async () => {
    const clientId = await newClient();
    const before = await dbState(app);
    const cases: [unknown, string][] = [
      [{ credit_package_id: pkg.id }, 'client_id'],
      [{ client_id: clientId }, 'credit_package_id'],
      [{}, 'client_id'],
      [{ ...body(clientId), credits: 1000 }, 'credits'],
      [{ ...body(clientId), client_id: 42 }, 'client_id'],
      [{ ...body(clientId), client_id: null }, 'client_id'],
      [{ ...body(clientId), client_id: '' }, 'client_id'],
      [{ ...body(clientId), client_id: 'x'.repeat(65) }, 'client_id'],
      [{ ...body(clientId), credit_package_id: ['cpkg'] }, 'credit_package_id'],
      [{ ...body(clientId), credit_package_id: { id: pkg.id } }, 'credit_package_id'],
      [{ ...body(clientId), credit_package_id: 'cpkg_\u0000' }, 'credit_package_id'],
      [[body(clientId)], 'body'],
      ['buy', 'body'],
    ];
    for (const [b, param] of cases) expectValidationError(await purchase(app, reseller, b), param);
    expectValidationError(
      await v3(app, '/credit_purchases', { key: reseller.key, raw: '{"client_id":', headers: { 'Content-Type': 'application/json' } }),
      'body',
    );
    expectValidationError(await purchase(app, reseller, body(clientId), ''), 'Idempotency-Key');
    await expectUnchanged(app, before);
  });

  it('without a key › 401; with a disabled account › 403; nothing written', async () => {
    const clientId = await newClient();
    const before = await dbState(app);
    expectError(await v3(app, '/credit_purchases', { body: body(clientId) }), 401, 'invalid_api_key');
    const disabled = await createReseller(app, { disabled: true });
    expectError(await purchase(app, disabled, body(clientId)), 403, 'account_disabled');
    // The disabled reseller made here adds its own row and business account; nothing else moved.
    expect({ ...(await dbState(app)), reseller: before.reseller, business_account: before.business_account }).toEqual(before);
  });
});

describe('GraphQL purchaseCredits', () => {
  const PURCHASE = `mutation($input: PurchaseCreditsInput!) { purchaseCredits(input: $input) { __typename
    ... on CreditPurchase { id client { id creditBalance } creditPackage { id name } credits amount currency balance createdAt }
    ... on Error { code message } ... on InputError { param } ... on NotFoundError { param } } }`;
  const mutate = async (input: Record<string, unknown>, idempotencyKey?: string, r = reseller): Promise<Reply> => {
    const res = await gql(app, r.key, PURCHASE, { input }, { idempotencyKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body.errors, res.text).toBeUndefined();
    return res;
  };

  it('buys like REST: the same rows, the same event, and the values the REST answer has', async () => {
    const clientId = await newClient();
    const business = await businessLedger(app, reseller.id);
    const outbox = await lastOutboxId(app);
    const res = await mutate({ clientId, creditPackageId: pkg.id }, 'gql-buy-1');
    const p = res.body.data.purchaseCredits;
    expect(p).toEqual({
      __typename: 'CreditPurchase',
      id: expect.stringMatching(/^cpur_/),
      client: { id: clientId, creditBalance: 170 },
      creditPackage: { id: pkg.id, name: 'Plus' },
      credits: 120,
      amount: 5500,
      currency: 'EUR',
      balance: 170,
      createdAt: NOW.replace('.000', ''),
    });
    const rows = await rowsOf(p.id);
    expect(rows.business).toEqual([expect.objectContaining({ type: 'DEBIT', amount: 5500, reference_id: p.id })]);
    expect(rows.wallet).toEqual([expect.objectContaining({ type: 'CREDIT', amount: 120, balance_after: 170, credit_purchase_id: p.id })]);
    expect(await businessLedger(app, reseller.id)).toEqual({
      balance: business.balance - 5500,
      ledgerSum: business.balance - 5500,
      rows: business.rows + 1,
    });
    const [event] = await outboxSince(app, outbox);
    expect(event.payload).toMatchObject({
      type: 'credits.purchased',
      request: { id: res.headers.get('request-id'), idempotency_key: 'gql-buy-1' },
    });
    // The event carries the V3 credit_purchase, the same values as the GraphQL answer.
    expect(event.payload.data.object).toEqual({
      object: 'credit_purchase',
      id: p.id,
      client_id: clientId,
      credit_package_id: pkg.id,
      credits: 120,
      amount: 5500,
      currency: 'EUR',
      balance: 170,
      created: unix(NOW),
    });
    // Replayed with its key: the same bytes, no second debit.
    const again = await gql(app, reseller.key, PURCHASE, { input: { clientId, creditPackageId: pkg.id } }, { idempotencyKey: 'gql-buy-1' });
    expect(again.text).toBe(res.text);
    expect(again.headers.get('x-idempotent-replayed')).toBe('true');
    expect(await businessLedger(app, reseller.id)).toEqual({
      balance: business.balance - 5500,
      ledgerSum: business.balance - 5500,
      rows: business.rows + 1,
    });
  });

  it('failures are members of the result union, with the REST codes and camelCase params; nothing written', async () => {
    const clientId = await newClient();
    const poor = await createReseller(app, { balance: 10 });
    const poorClient = await newClient(poor, (await createPassPackage(app, poor, { price: 0 })).id);
    const poorPackage = await createCreditPackage(app, poor, { price: 11 });
    const before = await dbState(app);
    const cases: [Record<string, unknown>, TestReseller, Record<string, unknown>][] = [
      [
        { clientId: othersClient, creditPackageId: pkg.id },
        reseller,
        { __typename: 'NotFoundError', code: 'resource_not_found', param: 'clientId' },
      ],
      [
        { clientId, creditPackageId: othersPackage.id },
        reseller,
        { __typename: 'NotFoundError', code: 'resource_not_found', param: 'creditPackageId' },
      ],
      [{ clientId, creditPackageId: '' }, reseller, { __typename: 'InputError', code: 'validation_error', param: 'creditPackageId' }],
      [{ clientId: poorClient, creditPackageId: poorPackage.id }, poor, { __typename: 'UnprocessableError', code: 'insufficient_balance' }],
    ];
    for (const [input, r, expected] of cases) {
      const result = (await mutate(input, undefined, r)).body.data.purchaseCredits;
      expect(result).toMatchObject(expected);
      expect(result.message).toEqual(expect.any(String));
    }
    await expectUnchanged(app, before);
  });
});
