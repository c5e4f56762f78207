import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.ts';
import { providerKey, readmeVerifier, provider, redeem, scanQr } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectUnchanged } from '../support/assertions.ts';
import { anotherClient, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger } from '../support/factories.ts';
import { gql } from '../support/http.ts';

// createAccessCode and confirmAccessCodeSession (docs/partner-guide.md "Access codes"): the use cases of the REST
// routes, each outcome a member of the result union, failures typed error members with the same
// catalogue codes and `param` in camelCase.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const CODE = `
  __typename
  ... on AccessCode { id code qrCode client { id } issuedPassId provider { id } status expiresAt createdAt }
  ... on Error { code message }
  ... on InputError { param }
  ... on NotFoundError { param }`;
const SESSION = `... on AccessCodeSession {
  message copayRequired additionalVisitsRequired sessionId sessionExpiresAt copayOptions { id clientCopayAmount } visitsUsed maxVisits costPerVisit
}`;
const CREATE = `mutation Create($input: CreateAccessCodeInput!) { createAccessCode(input: $input) { ${CODE} ${SESSION} } }`;
const CONFIRM = `mutation Confirm($input: ConfirmAccessCodeSessionInput!) { confirmAccessCodeSession(input: $input) { ${CODE} } }`;

async function create(input: Record<string, unknown>, idempotencyKey?: string) {
  const res = await gql(app, w.reseller.key, CREATE, { input }, idempotencyKey ? { idempotencyKey } : {});
  expect(res.status, res.text).toBe(200);
  expect(res.body.errors, res.text).toBeUndefined();
  return res.body.data.createAccessCode;
}
async function confirm(input: Record<string, unknown>) {
  const res = await gql(app, w.reseller.key, CONFIRM, { input });
  expect(res.body.errors, res.text).toBeUndefined();
  return res.body.data.confirmAccessCodeSession;
}

let clients = 0;
const newClient = () => anotherClient(app, w, `graphql${++clients}@example.com`);

describe('createAccessCode', () => {
  it('covered › AccessCode with its code and QR; the event carries neither', async () => {
    const client = await newClient();
    const outbox = await lastOutboxId(app);
    const code = await create({ clientId: client.id, providerId: w.gym.id });
    expect(code).toEqual({
      __typename: 'AccessCode',
      id: expect.stringMatching(/^ac_/),
      code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{8}$/),
      qrCode: expect.stringMatching(/^data:image\/png;base64,/),
      client: { id: client.id },
      issuedPassId: client.issuedPassId,
      provider: { id: w.gym.id },
      status: 'ACTIVE',
      expiresAt: '2026-03-02T23:00:00Z',
      createdAt: '2026-03-02T08:00:00Z',
    });
    const key = (await provider(app, '/access-codes/verification-key', { key: await providerKey(app, w.gym.id) })).body;
    expect((await readmeVerifier())(scanQr(code.qrCode), key, w.gym.id, app.clock.now().getTime())).toMatchObject({
      id: code.id,
      code: code.code,
    });
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => e.payload.type)).toEqual(['access_code.created']);
    expect(JSON.stringify(events)).not.toContain(code.code);
    expect(events[0].payload.data.object).toMatchObject({ id: code.id, provider_id: w.gym.id, status: 'ACTIVE' });
  });

  it('passCode, and without providerId › AccessCode for any gym', async () => {
    const client = await newClient();
    const [{ passcode }] = await app.sql<{ passcode: string }>('select passcode from issued_pass where id = ?', [client.issuedPassId]);
    expect(await create({ passCode: passcode })).toMatchObject({
      __typename: 'AccessCode',
      client: { id: client.id },
      provider: null,
      expiresAt: '2026-03-03T00:00:00Z',
    });
  });

  it('visits used up › AccessCodeSession (additional visits); confirmAccessCodeSession buys them and answers the code', async () => {
    const client = await newClient();
    await app.sql(`update issued_pass set visits_used = '{"GYM": 8}', visits_period = '2026-03' where id = ?`, [client.issuedPassId]);
    await app.sql(
      `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
                   values (?, ?, ?, ?, 'GYM', '2026-03', 8, 'BOOKING', ?)`,
      [newId('visitTransaction'), w.reseller.id, client.id, client.issuedPassId, app.clock.now()],
    );
    const session = await create({ clientId: client.id, providerId: w.gym.id });
    expect(session).toEqual({
      __typename: 'AccessCodeSession',
      message: expect.any(String),
      copayRequired: false,
      additionalVisitsRequired: true,
      sessionId: expect.stringMatching(/^sess_/),
      sessionExpiresAt: '2026-03-03T08:00:00Z',
      copayOptions: null,
      visitsUsed: 8,
      maxVisits: 8,
      costPerVisit: 1000,
    });
    const wrong = await confirm({ sessionId: session.sessionId, copayPackageId: w.copayGym.optionId });
    expect(wrong).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'copayPackageId' });
    const ledger = await businessLedger(app, w.reseller.id);
    const code = await confirm({ sessionId: session.sessionId, numberOfVisits: 2, duration: 'MONTHLY' });
    expect(code).toMatchObject({ __typename: 'AccessCode', client: { id: client.id }, provider: { id: w.gym.id }, status: 'ACTIVE' });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 2000);
    expect(await confirm({ sessionId: session.sessionId, numberOfVisits: 2, duration: 'MONTHLY' })).toMatchObject({
      __typename: 'ConflictError',
      code: 'session_already_confirmed',
    });
    expect((await redeem(app, await providerKey(app, w.gym.id), code.code)).status).toBe(200);
  });

  it('tier not covered › AccessCodeSession (co-pay) with the options; the confirm makes the code there', async () => {
    const client = await newClient();
    const session = await create({ clientId: client.id, providerId: w.copayGym.id });
    expect(session).toMatchObject({
      __typename: 'AccessCodeSession',
      copayRequired: true,
      additionalVisitsRequired: false,
      copayOptions: [{ id: w.copayGym.optionId, clientCopayAmount: 2500 }],
      visitsUsed: null,
      maxVisits: null,
      costPerVisit: null,
    });
    expect(await confirm({ sessionId: session.sessionId, numberOfVisits: 1, duration: 'MONTHLY' })).toMatchObject({
      __typename: 'InputError',
      param: 'numberOfVisits',
    });
    expect(await confirm({ sessionId: session.sessionId, copayPackageId: w.copayGym.optionId })).toMatchObject({
      __typename: 'AccessCode',
      provider: { id: w.copayGym.id },
    });
  });

  it('failures are error members with the REST codes, and write nothing', async () => {
    const before = await dbState(app);
    expect(await create({ clientId: w.client.id, providerId: w.closedSpa.id })).toMatchObject({
      __typename: 'PermissionError',
      code: 'provider_not_covered',
    });
    expect(await create({})).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'clientId' });
    expect(await create({ passCode: 'short' })).toMatchObject({ __typename: 'InputError', param: 'passCode' });
    expect(await create({ clientId: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' })).toMatchObject({
      __typename: 'NotFoundError',
      code: 'resource_not_found',
      param: 'clientId',
    });
    expect(await create({ clientId: w.client.id, providerId: 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ' })).toMatchObject({
      __typename: 'NotFoundError',
      param: 'providerId',
    });
    expect(await confirm({ sessionId: 'sess_01JZZZZZZZZZZZZZZZZZZZZZZZ', numberOfVisits: 1, duration: 'MONTHLY' })).toMatchObject({
      __typename: 'NotFoundError',
    });
    await expectUnchanged(app, before);
  });

  it('an Idempotency-Key replays the same code', async () => {
    const client = await newClient();
    const first = await create({ clientId: client.id, providerId: w.gym.id }, 'gql-code-1');
    const again = await gql(
      app,
      w.reseller.key,
      CREATE,
      { input: { clientId: client.id, providerId: w.gym.id } },
      { idempotencyKey: 'gql-code-1' },
    );
    expect(again.headers.get('x-idempotent-replayed')).toBe('true');
    expect(again.body.data.createAccessCode).toEqual(first);
    expect(await app.sql('select count(*)::int as n from access_code where client_id = ?', [client.id])).toEqual([{ n: 1 }]);
  });
});
