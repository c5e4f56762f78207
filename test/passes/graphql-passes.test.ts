import { textProblem } from '../../src/platform/text.ts';
import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { businessLedger, createPassPackage, createReseller, issuePass, walletLedger } from '../support/factories.ts';
import { gql } from '../support/http.ts';
import { expectUnchanged } from '../support/assertions.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';

const app = useApp();

const ISSUED_PASS_FIELDS = `id passcode status paymentModel startDate expiresAt createdAt
  client { id firstName lastName email phone externalId creditBalance }
  pass { id name paymentModel }
  categories { type tiers visitsAllowed visitsUsed creditAllocated }`;
const ERROR_FIELDS = '... on Error { code message } ... on InputError { param }';

const ISSUE = `mutation Issue($input: IssuePassInput!) {
  issuePass(input: $input) { __typename ... on IssuedPassPayload { issuedPass { ${ISSUED_PASS_FIELDS} } } ${ERROR_FIELDS} }
}`;
const UPDATE = `mutation Update($input: UpdateIssuedPassInput!) {
  updateIssuedPass(input: $input) { __typename ... on IssuedPassPayload { issuedPass { ${ISSUED_PASS_FIELDS} } } ${ERROR_FIELDS} }
}`;
const SET_EXPIRY = `mutation SetExpiry($input: SetIssuedPassExpiryInput!) {
  setIssuedPassExpiry(input: $input) { __typename ... on IssuedPassPayload { issuedPass { ${ISSUED_PASS_FIELDS} } } ${ERROR_FIELDS} }
}`;
const RENEW = `mutation Renew($input: RenewIssuedPassInput!) {
  renewIssuedPass(input: $input) {
    __typename
    ... on PassRenewal { amount currency previousExpiresAt newExpiresAt issuedPass { ${ISSUED_PASS_FIELDS} } }
    ${ERROR_FIELDS}
  }
}`;

const person = { firstName: 'Ada', lastName: 'Lovelace', email: 'Ada@Example.com' };

async function setup(now = '2027-03-10T12:00:00Z', balance = 100_000) {
  app.clock.set(new Date(now));
  const reseller = await createReseller(app, { balance });
  const payg = await createPassPackage(app, reseller, { name: 'Flex', paymentModel: 'PAYG' });
  const prepaid = await createPassPackage(app, reseller, { name: 'Prepaid', paymentModel: 'PREPAID', price: 3000 });
  return { reseller, payg, prepaid };
}

describe('mutation issuePass', () => {
  it('PREPAID › answers the IssuedPassPayload, debits the price and credits the wallet', async () => {
    const { reseller, prepaid } = await setup();
    const since = await lastOutboxId(app);
    const res = await gql(app, reseller.key, ISSUE, {
      input: { passId: prepaid.id, ...person, phone: '+44 20 7946 0958', externalId: 'crm-1' },
    });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const result = res.body.data.issuePass;
    expect(result.__typename).toBe('IssuedPassPayload');
    expect(result.issuedPass).toEqual({
      id: expect.stringMatching(/^ipass_/),
      passcode: expect.stringMatching(/^[A-Z0-9]{8}$/),
      status: 'ACTIVE',
      paymentModel: 'PREPAID',
      startDate: '2027-03-10',
      expiresAt: '2027-04-10T00:00:00Z',
      createdAt: '2027-03-10T12:00:00Z',
      client: {
        id: expect.stringMatching(/^client_/),
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.com',
        phone: '+44 20 7946 0958',
        externalId: 'crm-1',
        creditBalance: 50,
      },
      pass: { id: prepaid.id, name: 'Prepaid', paymentModel: 'PREPAID' },
      categories: [
        { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visitsAllowed: 8, visitsUsed: 0, creditAllocated: 0 },
        { type: 'SPA', tiers: ['SILVER'], visitsAllowed: null, visitsUsed: 0, creditAllocated: 50 },
      ],
    });
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 97_000, ledgerSum: 97_000, rows: 2 });
    expect(await walletLedger(app, result.issuedPass.client.id)).toEqual({ balance: 50, ledgerSum: 50 });
    expect((await outboxSince(app, since)).map((e) => e.payload.type)).toEqual(['issued_pass.created']);
  });

  it('with a startDate › starts then and expires one period later', async () => {
    const { reseller, payg } = await setup();
    const res = await gql(app, reseller.key, ISSUE, { input: { passId: payg.id, ...person, startDate: '2027-05-31' } });
    expect(res.body.data.issuePass.issuedPass).toMatchObject({ startDate: '2027-05-31', expiresAt: '2027-06-30T00:00:00Z' });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['an unknown passId', { passId: 'pass_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, 'passId'],
    ['a passId over 64 characters', { passId: 'p'.repeat(65) }, 'passId'],
    ['an invalid email', { email: 'not-an-email' }, 'email'],
    ['a firstName over 100 characters', { firstName: 'A'.repeat(101) }, 'firstName'],
    ['a blank lastName', { lastName: '   ' }, 'lastName'],
    ['a phone with letters', { phone: 'call me' }, 'phone'],
    ['an externalId over 255 characters', { externalId: 'x'.repeat(256) }, 'externalId'],
    ['a startDate in the past', { startDate: '2027-03-09' }, 'startDate'],
    ['a startDate over a year ahead', { startDate: '2028-06-01' }, 'startDate'],
  ];
  for (const [situation, override, param] of invalid) {
    it(`${situation} › answers InputError validation_error on ${param} with HTTP 200 and writes nothing`, async () => {
      const { reseller, payg } = await setup();
      const before = await dbState(app);
      const res = await gql(app, reseller.key, ISSUE, { input: { passId: payg.id, ...person, ...override } });
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.issuePass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param });
      await expectUnchanged(app, before);
    });
  }

  const unparsable: [string, Record<string, unknown>][] = [
    ['a startDate that is not a calendar date (2026-02-30)', { startDate: '2026-02-30' }],
    ['a startDate with a two-digit year (26-01-01)', { startDate: '26-01-01' }],
    ['a startDate that is a number', { startDate: 20270101 }],
    ['a missing email', { email: undefined }],
    ['a firstName that is a number', { firstName: 7 }],
  ];
  for (const [situation, override] of unparsable) {
    it(`${situation} › is refused before execution (HTTP 400, top-level error) and writes nothing`, async () => {
      const { reseller, payg } = await setup();
      const before = await dbState(app);
      const res = await gql(app, reseller.key, ISSUE, { input: { passId: payg.id, ...person, ...override } });
      expect(res.status).toBe(400);
      expect(res.body.errors?.length).toBeGreaterThan(0);
      expect(res.body.data).toBeUndefined();
      await expectUnchanged(app, before);
    });
  }

  it("another reseller's passId › answers InputError on passId", async () => {
    const { reseller } = await setup();
    const other = await createReseller(app);
    const foreign = await createPassPackage(app, other);
    const res = await gql(app, reseller.key, ISSUE, { input: { passId: foreign.id, ...person } });
    expect(res.body.data.issuePass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'passId' });
  });

  it('PREPAID with too little balance › answers UnprocessableError insufficient_balance with HTTP 200 and writes nothing', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z', 2999);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, ISSUE, { input: { passId: prepaid.id, ...person } });
    expect(res.status).toBe(200);
    expect(res.body.data.issuePass).toMatchObject({ __typename: 'UnprocessableError', code: 'insufficient_balance' });
    expect(res.body.data.issuePass).not.toHaveProperty('param');
    await expectUnchanged(app, before);
  });

  it('PREPAID with too little balance and an Idempotency-Key › writes nothing either', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z', 2999);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, ISSUE, { input: { passId: prepaid.id, ...person } }, { idempotencyKey: 'gql-poor-1' });
    expect(res.body.data.issuePass).toMatchObject({ __typename: 'UnprocessableError', code: 'insufficient_balance' });
    await expectUnchanged(app, before);
  });

  it('without an API key › is a top-level 401 and writes nothing', async () => {
    const { payg } = await setup();
    const before = await dbState(app);
    const res = await gql(app, undefined, ISSUE, { input: { passId: payg.id, ...person } });
    expect(res.status).toBe(401);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('invalid_api_key');
    await expectUnchanged(app, before);
  });
});

describe('mutation updateIssuedPass', () => {
  it('PAYG to PREPAID › changes the pass and starts a paid period now', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const since = await lastOutboxId(app);
    const res = await gql(app, reseller.key, UPDATE, { input: { clientId: issued.client_id, passId: prepaid.id } });
    expect(res.body.data.updateIssuedPass).toMatchObject({
      __typename: 'IssuedPassPayload',
      issuedPass: { id: issued.id, paymentModel: 'PREPAID', pass: { id: prepaid.id, name: 'Prepaid' }, expiresAt: '2027-04-10T12:00:00Z' },
    });
    expect((await outboxSince(app, since)).map((e) => e.payload.type)).toEqual(['issued_pass.updated']);
    expect((await businessLedger(app, reseller.id)).balance).toBe(97_000);
  });

  it('to the package it has › a ConflictError pass_unchanged on passId', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await gql(
      app,
      reseller.key,
      `mutation($input: UpdateIssuedPassInput!) { updateIssuedPass(input: $input) {
      __typename ... on ConflictError { code param } } }`,
      { input: { clientId: issued.client_id, passId: payg.id } },
    );
    expect(res.body.data.updateIssuedPass).toEqual({ __typename: 'ConflictError', code: 'pass_unchanged', param: 'passId' });
    await expectUnchanged(app, before);
  });

  it('an unknown clientId › answers InputError on clientId', async () => {
    const { reseller, payg } = await setup();
    const res = await gql(app, reseller.key, UPDATE, { input: { clientId: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ', passId: payg.id } });
    expect(res.status).toBe(200);
    expect(res.body.data.updateIssuedPass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'clientId' });
  });

  it('an unknown passId › answers InputError on passId and changes nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, UPDATE, { input: { clientId: issued.client_id, passId: 'pass_01JZZZZZZZZZZZZZZZZZZZZZZZ' } });
    expect(res.body.data.updateIssuedPass).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'passId' });
    await expectUnchanged(app, before);
  });

  it('a CANCELLED pass › answers ConflictError pass_cancelled', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    await app.sql("update issued_pass set status = 'CANCELLED' where id = ?", [issued.id]);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, UPDATE, { input: { clientId: issued.client_id, passId: prepaid.id } });
    expect(res.body.data.updateIssuedPass).toMatchObject({ __typename: 'ConflictError', code: 'pass_cancelled' });
    await expectUnchanged(app, before);
  });
});

describe('mutation setIssuedPassExpiry', () => {
  it('a future expiry › sets it and makes an expired pass ACTIVE again', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    app.clock.set(new Date('2027-04-11T00:00:00Z'));
    const read = await gql(app, reseller.key, 'query($c: ID!) { issuedPass(clientId: $c) { status } }', { c: issued.client_id });
    expect(read.body.data.issuedPass.status).toBe('EXPIRED');
    const res = await gql(app, reseller.key, SET_EXPIRY, { input: { clientId: issued.client_id, expiresAt: '2027-06-01T08:00:00Z' } });
    expect(res.body.data.setIssuedPassExpiry).toMatchObject({
      __typename: 'IssuedPassPayload',
      issuedPass: { status: 'ACTIVE', expiresAt: '2027-06-01T08:00:00Z' },
    });
  });

  it('a past expiry › answers InputError on expiresAt and changes nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, SET_EXPIRY, { input: { clientId: issued.client_id, expiresAt: '2027-03-01T00:00:00Z' } });
    expect(res.status).toBe(200);
    expect(res.body.data.setIssuedPassExpiry).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'expiresAt' });
    await expectUnchanged(app, before);
  });

  it('an expiresAt that is not a timestamp › is refused before execution (HTTP 400) and changes nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    for (const expiresAt of ['tomorrow', '2027-06-01', 1_900_000_000]) {
      const res = await gql(app, reseller.key, SET_EXPIRY, { input: { clientId: issued.client_id, expiresAt } });
      expect(res.status).toBe(400);
      expect(res.body.errors?.length).toBeGreaterThan(0);
    }
    await expectUnchanged(app, before);
  });

  it("another reseller's client › answers NotFoundError", async () => {
    const { reseller } = await setup();
    const other = await createReseller(app);
    const foreign = await issuePass(app, other, (await createPassPackage(app, other)).id);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, SET_EXPIRY, { input: { clientId: foreign.client_id, expiresAt: '2027-06-01T00:00:00Z' } });
    expect(res.body.data.setIssuedPassExpiry).toMatchObject({ __typename: 'NotFoundError', code: 'resource_not_found' });
    await expectUnchanged(app, before);
  });
});

describe('mutation renewIssuedPass', () => {
  it('PREPAID › answers the PassRenewal and debits the price', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    await app.sql(`update issued_pass set visits_used = '{"GYM": 4}', visits_period = '2027-03' where id = ?`, [issued.id]);
    const res = await gql(app, reseller.key, RENEW, { input: { clientId: issued.client_id } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.renewIssuedPass).toMatchObject({
      __typename: 'PassRenewal',
      amount: 3000,
      currency: 'EUR',
      previousExpiresAt: '2027-04-10T00:00:00Z',
      newExpiresAt: '2027-05-10T00:00:00Z',
      issuedPass: { id: issued.id, status: 'ACTIVE', expiresAt: '2027-05-10T00:00:00Z', client: { creditBalance: 100 } },
    });
    expect(res.body.data.renewIssuedPass.issuedPass.categories[0]).toMatchObject({ type: 'GYM', visitsUsed: 0 });
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 94_000, ledgerSum: 94_000, rows: 3 });
  });

  it('PAYG › answers ConflictError not_prepaid with HTTP 200 and debits nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, RENEW, { input: { clientId: issued.client_id } });
    expect(res.status).toBe(200);
    expect(res.body.data.renewIssuedPass).toMatchObject({ __typename: 'ConflictError', code: 'not_prepaid' });
    await expectUnchanged(app, before);
  });

  it('PREPAID with too little balance › answers UnprocessableError insufficient_balance and changes nothing', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z', 3000);
    const issued = await issuePass(app, reseller, prepaid.id);
    const before = await dbState(app);
    const res = await gql(app, reseller.key, RENEW, { input: { clientId: issued.client_id } });
    expect(res.body.data.renewIssuedPass).toMatchObject({ __typename: 'UnprocessableError', code: 'insufficient_balance' });
    await expectUnchanged(app, before);
  });

  it('an unknown client › answers NotFoundError', async () => {
    const { reseller } = await setup();
    const res = await gql(app, reseller.key, RENEW, { input: { clientId: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' } });
    expect(res.body.data.renewIssuedPass).toMatchObject({ __typename: 'NotFoundError', code: 'resource_not_found' });
  });
});

describe('queries', () => {
  it('passes › lists own packages newest first and pages with first/after', async () => {
    const { reseller, payg, prepaid } = await setup();
    const other = await createReseller(app);
    await createPassPackage(app, other);
    const page = `query($after: String) { passes(first: 1, after: $after) {
      edges { cursor node { id name price currency duration paymentModel categories { type creditAllocated } } }
      pageInfo { hasNextPage endCursor } } }`;
    const first = await gql(app, reseller.key, page);
    expect(first.body.data.passes.edges).toEqual([
      {
        cursor: prepaid.id,
        node: {
          id: prepaid.id,
          name: 'Prepaid',
          price: 3000,
          currency: 'EUR',
          duration: 'MONTHLY',
          paymentModel: 'PREPAID',
          categories: [
            { type: 'GYM', creditAllocated: 0 },
            { type: 'SPA', creditAllocated: 50 },
          ],
        },
      },
    ]);
    expect(first.body.data.passes.pageInfo).toEqual({ hasNextPage: true, endCursor: prepaid.id });
    const second = await gql(app, reseller.key, page, { after: prepaid.id });
    expect(second.body.data.passes.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([payg.id]);
    expect(second.body.data.passes.pageInfo.hasNextPage).toBe(false);
  });

  it("issuedPass › answers the client's pass; null for another reseller's client", async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const other = await createReseller(app);
    const q = `query($c: ID!) { issuedPass(clientId: $c) { id passcode status client { id } pass { id } } }`;
    const res = await gql(app, reseller.key, q, { c: issued.client_id });
    expect(res.body.data.issuedPass).toEqual({
      id: issued.id,
      passcode: issued.passcode,
      status: 'ACTIVE',
      client: { id: issued.client_id },
      pass: { id: payg.id },
    });
    const foreign = await gql(app, other.key, q, { c: issued.client_id });
    expect(foreign.body.data.issuedPass).toBeNull();
  });

  it("client › answers the client; null for an unknown or another reseller's id", async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id, { external_id: 'ext-9' });
    const other = await createReseller(app);
    const q = `query($id: ID!) { client(id: $id) { id firstName lastName email externalId creditBalance createdAt } }`;
    const res = await gql(app, reseller.key, q, { id: issued.client_id });
    expect(res.body.data.client).toEqual({
      id: issued.client_id,
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      externalId: 'ext-9',
      creditBalance: 50,
      createdAt: '2027-03-10T12:00:00Z',
    });
    expect((await gql(app, other.key, q, { id: issued.client_id })).body.data.client).toBeNull();
    expect((await gql(app, reseller.key, q, { id: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' })).body.data.client).toBeNull();
    // Not an id but not text either: the one text rule answers before any lookup.
    const nul = await gql(app, reseller.key, q, { id: 'client\u0000' });
    expect(nul.status).toBe(400);
    expect(nul.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'variables.id' });
  });

  it('node › resolves pass, issued pass and client ids to their types', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const q = `query($id: ID!) { node(id: $id) { __typename id ... on Pass { name } ... on IssuedPass { passcode } ... on Client { email } } }`;
    expect((await gql(app, reseller.key, q, { id: payg.id })).body.data.node).toEqual({ __typename: 'Pass', id: payg.id, name: 'Flex' });
    expect((await gql(app, reseller.key, q, { id: issued.id })).body.data.node).toEqual({
      __typename: 'IssuedPass',
      id: issued.id,
      passcode: issued.passcode,
    });
    expect((await gql(app, reseller.key, q, { id: issued.client_id })).body.data.node).toEqual({
      __typename: 'Client',
      id: issued.client_id,
      email: 'ada@example.com',
    });
  });

  it("node › answers null for another reseller's ids", async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const other = await createReseller(app);
    const q = 'query($id: ID!) { node(id: $id) { id } }';
    for (const id of [payg.id, issued.id, issued.client_id]) {
      const res = await gql(app, other.key, q, { id });
      expect(res.status).toBe(200);
      expect(res.body.data?.node).toBeNull();
      expect(JSON.stringify(res.body)).not.toContain('Ada');
    }
  });
});

describe('odd inputs over GraphQL', () => {
  const oddStrings = [
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '😀'.repeat(300),
    "'; drop table client; --",
    "' or '1'='1",
    'x'.repeat(70_000),
    '<b>',
    'null',
  ];

  it('in every issuePass field › never answer 5xx nor internal_error', async () => {
    const { reseller, payg } = await setup();
    for (const field of ['passId', 'firstName', 'lastName', 'email', 'phone', 'externalId']) {
      for (const value of oddStrings) {
        const res = await gql(app, reseller.key, ISSUE, { input: { passId: payg.id, ...person, [field]: value } });
        const what = `${field}=${JSON.stringify(value).slice(0, 30)} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, what).toBeLessThan(500);
        expect(JSON.stringify(res.body.errors ?? []), what).not.toContain('internal_error');
      }
    }
  });

  it('as ids of client, issuedPass and the mutations › answer null or a typed error, never internal_error', async () => {
    const { reseller } = await setup();
    for (const id of [
      ...oddStrings.filter((s) => textProblem(s) === undefined),
      'client_00000000000000000000000000',
      'pass_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    ]) {
      const read = await gql(app, reseller.key, 'query($id: ID!) { client(id: $id) { id } issuedPass(clientId: $id) { id } }', { id });
      expect(read.status).toBeLessThan(500);
      expect(read.body, JSON.stringify(id).slice(0, 30)).toEqual({ data: { client: null, issuedPass: null } });
      const renew = await gql(app, reseller.key, RENEW, { input: { clientId: id } });
      expect(renew.body.data?.renewIssuedPass?.__typename, JSON.stringify(id).slice(0, 30)).toBe('NotFoundError');
      const expiry = await gql(app, reseller.key, SET_EXPIRY, { input: { clientId: id, expiresAt: '2030-01-01T00:00:00Z' } });
      expect(expiry.body.data?.setIssuedPassExpiry?.__typename).toBe('NotFoundError');
    }
    // NUL and lone surrogates are not text (the text rule): 400 validation_error naming the variable, nothing run.
    for (const id of oddStrings.filter((s) => textProblem(s) !== undefined)) {
      const read = await gql(app, reseller.key, 'query($id: ID!) { client(id: $id) { id } }', { id });
      expect(read.status, JSON.stringify(id)).toBe(400);
      expect(read.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'variables.id' });
    }
  });
});
