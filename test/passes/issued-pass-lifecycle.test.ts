import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { businessLedger, createPassPackage, createReseller, issuePass, walletLedger, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { expectError, expectUnchanged, unix } from '../support/assertions.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';

const app = useApp();

const getIssued = (r: TestReseller, clientId: string) => v3(app, `/issued_passes/${clientId}`, { key: r.key });
const cancel = (issuedPassId: string) => app.sql("update issued_pass set status = 'CANCELLED' where id = ?", [issuedPassId]);

/** A funded reseller with a PAYG and a PREPAID package, at a fixed "now". */
async function setup(now = '2027-03-10T12:00:00Z', balance = 1_000_000) {
  app.clock.set(new Date(now));
  const reseller = await createReseller(app, { balance });
  const payg = await createPassPackage(app, reseller, { name: 'Flex', paymentModel: 'PAYG', price: 0 });
  const prepaid = await createPassPackage(app, reseller, { name: 'Prepaid Monthly', paymentModel: 'PREPAID', price: 3000 });
  return { reseller, payg, prepaid };
}

const update = (r: TestReseller, clientId: string, passId: string) =>
  v3(app, '/issued_passes/update', { key: r.key, body: { client_id: clientId, pass_id: passId } });
/** A wallet debit the client made elsewhere (a spa booking), as its ledger row moves the balance. */
const spendCredits = (clientId: string, resellerId: string, amount: number) =>
  app.sql(
    `insert into credit_transaction (id, reseller_id, client_id, type, amount, description, created_at) values (?, ?, ?, 'DEBIT', ?, 'spent', now())`,
    [`ctxn_${clientId.slice(-26)}`, resellerId, clientId, amount],
  );

describe('POST /issued_passes/update', () => {
  it('PAYG to PREPAID › debits the new price, starts a paid period now and grants its credits', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    expect(issued.paid_through).toBeNull();
    const res = await update(reseller, issued.client_id, prepaid.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      object: 'issued_pass',
      id: issued.id,
      client_id: issued.client_id,
      pass_id: prepaid.id,
      pass_name: 'Prepaid Monthly',
      payment_model: 'PREPAID',
      status: 'ACTIVE',
      passcode: issued.passcode,
      expires_at: unix('2027-04-10T12:00:00Z'),
      paid_through: unix('2027-04-10T12:00:00Z'),
    });
    expect((await getIssued(reseller, issued.client_id)).body).toEqual(res.body);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 997_000, ledgerSum: 997_000, rows: 2 });
    const [debit] = await app.sql<{ amount: string; reference_id: string }>(
      "select amount::text, reference_id from business_transaction where reseller_id = ? and type = 'DEBIT'",
      [reseller.id],
    );
    expect(debit).toEqual({ amount: '3000', reference_id: issued.id });
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 100, ledgerSum: 100 });
  });

  it('PAYG to PAYG › moves nothing and keeps expires_at', async () => {
    const { reseller, payg } = await setup();
    const other = await createPassPackage(app, reseller, { name: 'Flex Plus', paymentModel: 'PAYG', price: 0 });
    const issued = await issuePass(app, reseller, payg.id);
    const ledger = await businessLedger(app, reseller.id);
    const wallet = await walletLedger(app, issued.client_id);
    const res = await update(reseller, issued.client_id, other.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ pass_id: other.id, payment_model: 'PAYG', expires_at: issued.expires_at, paid_through: null });
    expect(await businessLedger(app, reseller.id)).toEqual(ledger);
    expect(await walletLedger(app, issued.client_id)).toEqual(wallet);
  });

  it('PREPAID to PAYG mid-period › refunds the unused whole days and takes back their share of the credits; expiry kept', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    expect(issued).toMatchObject({ expires_at: unix('2027-04-10T00:00:00Z'), paid_through: unix('2027-04-10T00:00:00Z') });
    app.clock.set(new Date('2027-03-20T12:00:00Z'));
    const res = await update(reseller, issued.client_id, payg.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ payment_model: 'PAYG', expires_at: unix('2027-04-10T00:00:00Z'), paid_through: null });
    // 20 whole days left of the 31 of the period: 3000 × 20 ÷ 31 = 1935, 50 × 20 ÷ 31 = 32 credits.
    const rows = await app.sql<{ type: string; amount: string; reference_id: string }>(
      'select type, amount::text, reference_id from business_transaction where reseller_id = ? order by id',
      [reseller.id],
    );
    expect(rows.slice(1)).toEqual([
      { type: 'DEBIT', amount: '3000', reference_id: issued.id },
      { type: 'CREDIT', amount: '1935', reference_id: issued.id },
    ]);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 998_935, ledgerSum: 998_935, rows: 3 });
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 18, ledgerSum: 18 });
  });

  it('PREPAID to PAYG after some credits were spent › the refund shrinks in proportion to the credits that cannot come back', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    await spendCredits(issued.client_id, reseller.id, 34);
    app.clock.set(new Date('2027-03-20T12:00:00Z'));
    const res = await update(reseller, issued.client_id, payg.id);
    expect(res.status, res.text).toBe(200);
    // 32 credits are due back and 16 are left: half the refund, 3000 × 20 × 16 ÷ (31 × 32) = 967.
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 997_967, ledgerSum: 997_967, rows: 3 });
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 0, ledgerSum: 0 });
  });

  it('in and out of PREPAID on one day › hands out nothing: the price comes back only with the credits', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const ledger = await businessLedger(app, reseller.id);
    const wallet = await walletLedger(app, issued.client_id);
    expect((await update(reseller, issued.client_id, prepaid.id)).status).toBe(200);
    expect((await update(reseller, issued.client_id, payg.id)).status).toBe(200);
    const after = await walletLedger(app, issued.client_id);
    const business = await businessLedger(app, reseller.id);
    // The whole period was unused but for the part of today: at most a day's price is kept, no credit is gained.
    expect(after.balance).toBeLessThanOrEqual(wallet.balance + 2);
    expect(business.balance).toBeLessThanOrEqual(ledger.balance);
    expect(business.balance).toBeGreaterThanOrEqual(ledger.balance - 100);
    expect(business.ledgerSum).toBe(business.balance);
  });

  it('PREPAID to another PREPAID › refunds the old period, debits the new price, expiry one new duration from now', async () => {
    const { reseller, prepaid } = await setup();
    const quarterly = await createPassPackage(app, reseller, {
      name: 'Quarterly Prepaid',
      paymentModel: 'PREPAID',
      duration: 'QUARTERLY',
      price: 8000,
    });
    const issued = await issuePass(app, reseller, prepaid.id);
    app.clock.set(new Date('2027-03-20T12:00:00Z'));
    const res = await update(reseller, issued.client_id, quarterly.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      pass_id: quarterly.id,
      expires_at: unix('2027-06-20T12:00:00Z'),
      paid_through: unix('2027-06-20T12:00:00Z'),
    });
    expect(await businessLedger(app, reseller.id)).toEqual({
      balance: 1_000_000 - 3000 + 1935 - 8000,
      ledgerSum: 1_000_000 - 3000 + 1935 - 8000,
      rows: 4,
    });
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 50 - 32 + 50, ledgerSum: 50 - 32 + 50 });
  });

  it('into PREPAID with too little balance › answers 422 insufficient_balance and changes nothing', async () => {
    const { reseller, payg, prepaid } = await setup('2027-03-10T12:00:00Z', 2999);
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await update(reseller, issued.client_id, prepaid.id);
    expectError(res, 422, 'insufficient_balance');
    await expectUnchanged(app, before);
    expect((await getIssued(reseller, issued.client_id)).body).toMatchObject({ pass_id: payg.id, payment_model: 'PAYG' });
  });

  it('success › records issued_pass.updated with the new package', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const since = await lastOutboxId(app);
    const res = await update(reseller, issued.client_id, prepaid.id);
    const events = await outboxSince(app, since);
    expect(events).toHaveLength(1);
    expect(events[0].topic).toBe('event');
    expect(events[0].payload).toMatchObject({ type: 'issued_pass.updated', data: { object: res.body } });
    expect(events[0].payload.data.object.pass_id).toBe(prepaid.id);
  });

  it('to the package it already has › answers 409 pass_unchanged on pass_id, moves nothing and records no event', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    const before = await dbState(app);
    const res = await update(reseller, issued.client_id, prepaid.id);
    expectError(res, 409, 'pass_unchanged', 'pass_id');
    expect(res.body.error.type).toBe('resource_conflict_error');
    await expectUnchanged(app, before);
  });

  it('an expired pass into PREPAID › starts a paid period now and is ACTIVE again', async () => {
    const { reseller, payg, prepaid } = await setup('2027-01-31T10:00:00Z');
    const issued = await issuePass(app, reseller, payg.id);
    app.clock.set(new Date('2027-03-01T00:00:00Z'));
    const res = await update(reseller, issued.client_id, prepaid.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ACTIVE',
      expires_at: unix('2027-04-01T00:00:00Z'),
      paid_through: unix('2027-04-01T00:00:00Z'),
      pass_id: prepaid.id,
    });
  });

  it('an expired PREPAID pass to PAYG › refunds nothing: its paid period is over', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    app.clock.set(new Date('2027-05-01T00:00:00Z'));
    const ledger = await businessLedger(app, reseller.id);
    const res = await update(reseller, issued.client_id, payg.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'EXPIRED', paid_through: null });
    expect(await businessLedger(app, reseller.id)).toEqual(ledger);
  });

  it('a CANCELLED pass › answers 409 pass_cancelled and changes nothing', async () => {
    const { reseller, payg, prepaid } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    await cancel(issued.id);
    const before = await dbState(app);
    const res = await update(reseller, issued.client_id, prepaid.id);
    expectError(res, 409, 'pass_cancelled');
    expect(res.body.error.type).toBe('resource_conflict_error');
    await expectUnchanged(app, before);
  });
});

describe('POST /issued_passes/{client_id}/expiry', () => {
  it('a future expiry › answers 200 with it, status ACTIVE, and stores it', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const expiresAt = unix('2027-09-01T18:30:00Z');
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, { key: reseller.key, body: { expires_at: expiresAt } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'issued_pass', id: issued.id, expires_at: expiresAt, status: 'ACTIVE', pass_id: payg.id });
    expect((await getIssued(reseller, issued.client_id)).body.expires_at).toBe(expiresAt);
    const [row] = await app.sql<{ expires_at: Date }>('select expires_at from issued_pass where id = ?', [issued.id]);
    expect(new Date(row.expires_at).toISOString()).toBe('2027-09-01T18:30:00.000Z');
  });

  it('an earlier but still future expiry › shortens the pass', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const expiresAt = unix('2027-03-11T00:00:00Z');
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, { key: reseller.key, body: { expires_at: expiresAt } });
    expect(res.status).toBe(200);
    expect(res.body.expires_at).toBe(expiresAt);
  });

  it('one second from now › is accepted', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, {
      key: reseller.key,
      body: { expires_at: unix('2027-03-10T12:00:01Z') },
    });
    expect(res.status).toBe(200);
  });

  it('in the past › answers 400 on expires_at and changes nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, {
      key: reseller.key,
      body: { expires_at: unix('2027-03-10T11:59:59Z') },
    });
    expectError(res, 400, 'validation_error', 'expires_at');
    await expectUnchanged(app, before);
  });

  it('future but before the start date › answers 400 on expires_at', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id, { start_date: '2027-04-01' });
    const before = await dbState(app);
    for (const at of ['2027-03-20T00:00:00Z', '2027-04-01T00:00:00Z']) {
      const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, { key: reseller.key, body: { expires_at: unix(at) } });
      expectError(res, 400, 'validation_error', 'expires_at');
    }
    await expectUnchanged(app, before);
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, {
      key: reseller.key,
      body: { expires_at: unix('2027-04-01T00:00:01Z') },
    });
    expect(res.status).toBe(200);
  });

  it('after the pass expired › reads EXPIRED, and a new future expiry makes it ACTIVE again', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    expect(issued.expires_at).toBe(unix('2027-04-10T00:00:00Z'));
    app.clock.set(new Date('2027-04-12T09:00:00Z'));
    expect((await getIssued(reseller, issued.client_id)).body.status).toBe('EXPIRED');
    expect((await v3(app, `/clients/${issued.client_id}`, { key: reseller.key })).body.active_pass.status).toBe('EXPIRED');

    const expiresAt = unix('2027-05-12T09:00:00Z');
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, { key: reseller.key, body: { expires_at: expiresAt } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ACTIVE', expires_at: expiresAt });
    expect((await getIssued(reseller, issued.client_id)).body.status).toBe('ACTIVE');
    expect((await v3(app, `/clients/${issued.client_id}`, { key: reseller.key })).body.active_pass).toMatchObject({
      status: 'ACTIVE',
      expires_at: expiresAt,
    });
  });

  it('a pass stored as EXPIRED › becomes ACTIVE again', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    await app.sql("update issued_pass set status = 'EXPIRED' where id = ?", [issued.id]);
    expect((await getIssued(reseller, issued.client_id)).body.status).toBe('EXPIRED');
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, {
      key: reseller.key,
      body: { expires_at: unix('2027-06-01T00:00:00Z') },
    });
    expect(res.body.status).toBe('ACTIVE');
    const [row] = await app.sql<{ status: string }>('select status from issued_pass where id = ?', [issued.id]);
    expect(row.status).toBe('ACTIVE');
  });

  it('success › records issued_pass.updated; a failure records nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    let since = await lastOutboxId(app);
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, {
      key: reseller.key,
      body: { expires_at: unix('2027-06-01T00:00:00Z') },
    });
    const events = await outboxSince(app, since);
    expect(events.map((e) => [e.topic, e.payload.type])).toEqual([['event', 'issued_pass.updated']]);
    expect(events[0].payload.data.object).toEqual(res.body);

    since = await lastOutboxId(app);
    await v3(app, `/issued_passes/${issued.client_id}/expiry`, { key: reseller.key, body: { expires_at: unix('2020-01-01T00:00:00Z') } });
    expect(await outboxSince(app, since)).toEqual([]);
  });

  it('a CANCELLED pass › answers 409 pass_cancelled and changes nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    await cancel(issued.id);
    const before = await dbState(app);
    const res = await v3(app, `/issued_passes/${issued.client_id}/expiry`, {
      key: reseller.key,
      body: { expires_at: unix('2027-06-01T00:00:00Z') },
    });
    expectError(res, 409, 'pass_cancelled');
    await expectUnchanged(app, before);
    expect((await getIssued(reseller, issued.client_id)).body.status).toBe('CANCELLED');
  });
});

describe('POST /issued_passes/{client_id}/expiry: what was paid for', () => {
  const setExpiry = (r: TestReseller, clientId: string, at: string) =>
    v3(app, `/issued_passes/${clientId}/expiry`, { key: r.key, body: { expires_at: unix(at) } });

  it('PAYG › up to 5 years ahead is accepted; a second later is 400 on expires_at', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    expectError(await setExpiry(reseller, issued.client_id, '2032-03-10T12:00:01Z'), 400, 'validation_error', 'expires_at');
    expectError(await setExpiry(reseller, issued.client_id, '2100-01-01T00:00:00Z'), 400, 'validation_error', 'expires_at');
    await expectUnchanged(app, before);
    const res = await setExpiry(reseller, issued.client_id, '2032-03-10T12:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expires_at: unix('2032-03-10T12:00:00Z'), paid_through: null });
  });

  it('PREPAID past paid_through (the year 2100) › answers 409 renewal_required and moves no money and no expiry', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    const before = await dbState(app);
    for (const at of ['2100-01-01T00:00:00Z', '2027-04-10T00:00:01Z']) {
      const res = await setExpiry(reseller, issued.client_id, at);
      expectError(res, 409, 'renewal_required', 'expires_at');
      expect(res.body.error.type).toBe('resource_conflict_error');
    }
    await expectUnchanged(app, before);
    expect((await getIssued(reseller, issued.client_id)).body.expires_at).toBe(unix('2027-04-10T00:00:00Z'));
  });

  it('PREPAID › may be shortened and set back up to paid_through; a renewal pays for more', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    expect((await setExpiry(reseller, issued.client_id, '2027-04-01T00:00:00Z')).body).toMatchObject({
      expires_at: unix('2027-04-01T00:00:00Z'),
      paid_through: unix('2027-04-10T00:00:00Z'),
    });
    expect((await setExpiry(reseller, issued.client_id, '2027-04-10T00:00:00Z')).status).toBe(200);
    const renewal = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(renewal.body.issued_pass.paid_through).toBe(unix('2027-05-10T00:00:00Z'));
    expect((await setExpiry(reseller, issued.client_id, '2027-05-10T00:00:00Z')).status).toBe(200);
    expectError(await setExpiry(reseller, issued.client_id, '2027-05-10T00:00:01Z'), 409, 'renewal_required', 'expires_at');
  });

  it('GraphQL setIssuedPassExpiry › a ConflictError renewal_required; paidThrough on the IssuedPass', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    const res = await gql(
      app,
      reseller.key,
      `mutation($i: SetIssuedPassExpiryInput!) { setIssuedPassExpiry(input: $i) {
      __typename ... on Error { code } ... on ConflictError { param } } }`,
      { i: { clientId: issued.client_id, expiresAt: '2100-01-01T00:00:00Z' } },
    );
    expect(res.body.data.setIssuedPassExpiry).toEqual({ __typename: 'ConflictError', code: 'renewal_required', param: 'expiresAt' });
    const read = await gql(app, reseller.key, 'query($id: ID!) { issuedPass(clientId: $id) { paidThrough expiresAt } }', {
      id: issued.client_id,
    });
    expect(read.body.data.issuedPass).toEqual({ paidThrough: '2027-04-10T00:00:00Z', expiresAt: '2027-04-10T00:00:00Z' });
  });
});

describe('POST /issued_passes/{client_id}/renew', () => {
  it('PAYG pass › answers 409 not_prepaid and debits nothing', async () => {
    const { reseller, payg } = await setup();
    const issued = await issuePass(app, reseller, payg.id);
    const before = await dbState(app);
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expectError(res, 409, 'not_prepaid');
    expect(res.body.error.type).toBe('resource_conflict_error');
    await expectUnchanged(app, before);
  });

  it('CANCELLED pass › answers 409 pass_cancelled and debits nothing', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    await cancel(issued.id);
    const before = await dbState(app);
    expectError(await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' }), 409, 'pass_cancelled');
    await expectUnchanged(app, before);
  });

  it('PREPAID before expiry › extends from expires_at by one period and answers the pass_renewal', async () => {
    const { reseller, prepaid } = await setup('2027-01-31T10:00:00Z');
    const issued = await issuePass(app, reseller, prepaid.id);
    expect(issued.expires_at).toBe(unix('2027-02-28T00:00:00Z'));
    app.clock.set(new Date('2027-02-20T08:00:00Z'));
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      object: 'pass_renewal',
      issued_pass: expect.objectContaining({
        object: 'issued_pass',
        id: issued.id,
        client_id: issued.client_id,
        pass_id: prepaid.id,
        status: 'ACTIVE',
        payment_model: 'PREPAID',
        expires_at: unix('2027-03-28T00:00:00Z'),
        start_date: '2027-01-31',
        passcode: issued.passcode,
      }),
      amount: 3000,
      currency: 'EUR',
      previous_expires_at: unix('2027-02-28T00:00:00Z'),
      new_expires_at: unix('2027-03-28T00:00:00Z'),
    });
    expect((await getIssued(reseller, issued.client_id)).body).toEqual(res.body.issued_pass);
  });

  it('PREPAID after expiry › extends from now by one period and is ACTIVE again', async () => {
    const { reseller, prepaid } = await setup('2027-01-15T10:00:00Z');
    const issued = await issuePass(app, reseller, prepaid.id);
    app.clock.set(new Date('2027-03-31T16:45:00Z'));
    expect((await getIssued(reseller, issued.client_id)).body.status).toBe('EXPIRED');
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      previous_expires_at: unix('2027-02-15T00:00:00Z'),
      new_expires_at: unix('2027-04-30T16:45:00Z'),
      issued_pass: { status: 'ACTIVE', expires_at: unix('2027-04-30T16:45:00Z') },
    });
    expect((await getIssued(reseller, issued.client_id)).body.status).toBe('ACTIVE');
  });

  it('PREPAID stored as EXPIRED › is renewed and stored ACTIVE', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    await app.sql("update issued_pass set status = 'EXPIRED' where id = ?", [issued.id]);
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(res.status).toBe(201);
    const [row] = await app.sql<{ status: string }>('select status from issued_pass where id = ?', [issued.id]);
    expect(row.status).toBe('ACTIVE');
  });

  it('PREPAID › debits the price (DEBIT row with balance_after) and grants the SPA credits again', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z', 10_000);
    const issued = await issuePass(app, reseller, prepaid.id);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 7000, ledgerSum: 7000, rows: 2 });
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(res.status).toBe(201);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 4000, ledgerSum: 4000, rows: 3 });
    const debits = await app.sql<{ amount: string; balance_after: string; reference_id: string }>(
      "select amount::text, balance_after::text, reference_id from business_transaction where reseller_id = ? and type = 'DEBIT' order by id",
      [reseller.id],
    );
    expect(debits).toEqual([
      { amount: '3000', balance_after: '7000', reference_id: issued.id },
      { amount: '3000', balance_after: '4000', reference_id: issued.id },
    ]);
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 100, ledgerSum: 100 });
    const credits = await app.sql<{ type: string; amount: string; balance_after: string }>(
      'select type, amount::text, balance_after::text from credit_transaction where client_id = ? order by id',
      [issued.client_id],
    );
    expect(credits).toEqual([
      { type: 'CREDIT', amount: '50', balance_after: '50' },
      { type: 'CREDIT', amount: '50', balance_after: '100' },
    ]);
  });

  it('PREPAID › resets the visit counters', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    await app.sql(`update issued_pass set visits_used = '{"GYM": 5}', visits_period = '2027-03' where id = ?`, [issued.id]);
    expect((await getIssued(reseller, issued.client_id)).body.categories[0]).toMatchObject({ type: 'GYM', visits_used: 5 });
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(res.status).toBe(201);
    expect(res.body.issued_pass.categories.map((c: { visits_used: number }) => c.visits_used)).toEqual([0, 0]);
    expect((await getIssued(reseller, issued.client_id)).body.categories[0]).toMatchObject({ type: 'GYM', visits_used: 0 });
    const [row] = await app.sql<{ visits_used: unknown }>('select visits_used from issued_pass where id = ?', [issued.id]);
    expect(row.visits_used).toEqual({});
  });

  it('twice › stacks the periods on the previous expiry', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z');
    const issued = await issuePass(app, reseller, prepaid.id);
    const first = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    const second = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(first.body.new_expires_at).toBe(unix('2027-05-10T00:00:00Z'));
    expect(second.body).toMatchObject({ previous_expires_at: unix('2027-05-10T00:00:00Z'), new_expires_at: unix('2027-06-10T00:00:00Z') });
    expect(await businessLedger(app, reseller.id)).toMatchObject({ balance: 1_000_000 - 3 * 3000, ledgerSum: 1_000_000 - 3 * 3000 });
  });

  it('after moving to another PREPAID package › charges its price and adds its duration', async () => {
    const { reseller, payg } = await setup('2027-03-10T12:00:00Z', 100_000);
    const quarterly = await createPassPackage(app, reseller, {
      name: 'Quarterly',
      paymentModel: 'PREPAID',
      duration: 'QUARTERLY',
      price: 8000,
    });
    const issued = await issuePass(app, reseller, payg.id);
    expect((await update(reseller, issued.client_id, quarterly.id)).status).toBe(200);
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      amount: 8000,
      previous_expires_at: unix('2027-06-10T12:00:00Z'),
      new_expires_at: unix('2027-09-10T12:00:00Z'),
    });
    expect(res.body.issued_pass.paid_through).toBe(unix('2027-09-10T12:00:00Z'));
    expect(await businessLedger(app, reseller.id)).toMatchObject({ balance: 84_000, ledgerSum: 84_000 });
  });

  it('with an empty JSON object body › renews like a body-less request', async () => {
    const { reseller, prepaid } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, body: {} });
    expect(res.status).toBe(201);
  });

  it('PREPAID with too little balance › answers 422 insufficient_balance and changes nothing, expiry included', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z', 3000);
    const issued = await issuePass(app, reseller, prepaid.id);
    await app.sql(`update issued_pass set visits_used = '{"GYM": 2}', visits_period = '2027-03' where id = ?`, [issued.id]);
    const before = await dbState(app);
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' });
    expectError(res, 422, 'insufficient_balance');
    await expectUnchanged(app, before);
    expect((await getIssued(reseller, issued.client_id)).body).toMatchObject({
      expires_at: issued.expires_at,
      categories: [{ visits_used: 2 }, { visits_used: 0 }],
    });
  });

  it('PREPAID with too little balance and an Idempotency-Key › changes nothing, and the replay answers the same 422', async () => {
    const { reseller, prepaid } = await setup('2027-03-10T12:00:00Z', 3000);
    const issued = await issuePass(app, reseller, prepaid.id);
    const before = await dbState(app);
    const first = await v3(app, `/issued_passes/${issued.client_id}/renew`, {
      key: reseller.key,
      method: 'POST',
      idempotencyKey: 'renew-poor',
    });
    expectError(first, 422, 'insufficient_balance');
    await expectUnchanged(app, before);
    const replay = await v3(app, `/issued_passes/${issued.client_id}/renew`, {
      key: reseller.key,
      method: 'POST',
      idempotencyKey: 'renew-poor',
    });
    expect(replay.status).toBe(422);
    expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
    await expectUnchanged(app, before);
  });

  it('success › records issued_pass.renewed with the renewal; failures record nothing', async () => {
    const { reseller, prepaid, payg } = await setup();
    const issued = await issuePass(app, reseller, prepaid.id);
    let since = await lastOutboxId(app);
    const res = await v3(app, `/issued_passes/${issued.client_id}/renew`, {
      key: reseller.key,
      method: 'POST',
      idempotencyKey: 'renew-evt-1',
    });
    expect(res.status).toBe(201);
    const events = await outboxSince(app, since);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ topic: 'event', reseller_id: reseller.id });
    expect(events[0].payload).toMatchObject({
      object: 'event',
      type: 'issued_pass.renewed',
      data: { object: res.body },
      request: { idempotency_key: 'renew-evt-1' },
    });

    const paygClient = await issuePass(app, reseller, payg.id);
    since = await lastOutboxId(app);
    expectError(await v3(app, `/issued_passes/${paygClient.client_id}/renew`, { key: reseller.key, method: 'POST' }), 409, 'not_prepaid');
    await cancel(issued.id);
    expectError(await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, method: 'POST' }), 409, 'pass_cancelled');
    expect(await outboxSince(app, since)).toEqual([]);
  });
});
