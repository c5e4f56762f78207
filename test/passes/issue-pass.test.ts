import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { businessLedger, clientBody, createPassPackage, createReseller, issuePass, walletLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';
import { expectError, expectUnchanged, unix } from '../support/assertions.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';

const app = useApp();

describe('POST /issued_passes', () => {
  it('issues a PREPAID pass › debits the business account the price and credits the wallet', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 29_900 });
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    expect(res.status).toBe(201);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(res.body).toMatchObject({ object: 'issued_pass', pass_id: pass.id, status: 'ACTIVE', payment_model: 'PREPAID' });
    expect(res.body.passcode).toMatch(/^[A-Z0-9]{8}$/);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 70_100, ledgerSum: 70_100, rows: 2 });
    expect(await walletLedger(app, res.body.client_id)).toEqual({ balance: 50, ledgerSum: 50 });
  });

  it('PREPAID › writes one DEBIT row for the price with balance_after, referencing the issued pass', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 12_345 });
    const issued = await issuePass(app, reseller, pass.id);
    const debits = await app.sql<{ type: string; amount: string; balance_after: string; reference_id: string }>(
      "select type, amount::text, balance_after::text, reference_id from business_transaction where reseller_id = ? and type = 'DEBIT'",
      [reseller.id],
    );
    expect(debits).toEqual([{ type: 'DEBIT', amount: '12345', balance_after: '87655', reference_id: issued.id }]);
    const wallet = await app.sql<{ type: string; amount: string; balance_after: string }>(
      'select type, amount::text, balance_after::text from credit_transaction where client_id = ?',
      [issued.client_id],
    );
    expect(wallet).toEqual([{ type: 'CREDIT', amount: '50', balance_after: '50' }]);
  });

  it('PAYG › debits nothing and leaves the balance as funded', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PAYG', price: 29_900 });
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    expect(res.status).toBe(201);
    expect(res.body.payment_model).toBe('PAYG');
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 100_000, ledgerSum: 100_000, rows: 1 });
  });

  it('PAYG on an unfunded account › is issued all the same', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PAYG', price: 29_900 });
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    expect(res.status).toBe(201);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 0, ledgerSum: 0, rows: 0 });
  });

  it('PAYG with a SPA allocation › credits the wallet too (credits are per period, whoever pays)', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PAYG' });
    const issued = await issuePass(app, reseller, pass.id);
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 50, ledgerSum: 50 });
  });

  it('a package without SPA credits › writes no wallet row', async () => {
    const reseller = await createReseller(app, { balance: 10_000 });
    const pass = await createPassPackage(app, reseller, {
      paymentModel: 'PREPAID',
      price: 1000,
      categories: [{ type: 'GYM', tiers: ['BRONZE'], visits_allowed: null, credit_allocated: 0 }],
    });
    const issued = await issuePass(app, reseller, pass.id);
    expect(await app.sql('select id from credit_transaction where client_id = ?', [issued.client_id])).toEqual([]);
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 0, ledgerSum: 0 });
  });

  it('PREPAID with a balance of exactly the price › is issued and leaves 0', async () => {
    const reseller = await createReseller(app, { balance: 5000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 5000 });
    await issuePass(app, reseller, pass.id);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 0, ledgerSum: 0, rows: 2 });
  });

  it('PREPAID with too little balance › answers 422 insufficient_balance and writes nothing', async () => {
    const reseller = await createReseller(app, { balance: 4999 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 5000 });
    const before = await dbState(app);
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    expectError(res, 422, 'insufficient_balance');
    expect(res.body.error.type).toBe('unprocessable_error');
    await expectUnchanged(app, before);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 4999, ledgerSum: 4999, rows: 1 });
  });

  it('PREPAID with too little balance and an Idempotency-Key › writes nothing either', async () => {
    const reseller = await createReseller(app, { balance: 10 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 5000 });
    const before = await dbState(app);
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id), idempotencyKey: 'issue-too-poor' });
    expectError(res, 422, 'insufficient_balance');
    await expectUnchanged(app, before);
  });

  it('PREPAID priced 0 › writes no ledger row but still grants the credits', async () => {
    const reseller = await createReseller(app, { balance: 1000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 0 });
    const issued = await issuePass(app, reseller, pass.id);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 1000, ledgerSum: 1000, rows: 1 });
    expect(await walletLedger(app, issued.client_id)).toEqual({ balance: 50, ledgerSum: 50 });
  });

  it('retried with the same Idempotency-Key › replays the first answer without a second client or debit', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 10_000 });
    const first = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id), idempotencyKey: 'issue-once' });
    expect(first.status).toBe(201);
    const before = await dbState(app);
    const again = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id), idempotencyKey: 'issue-once' });
    expect(again.status).toBe(201);
    expect(again.headers.get('x-idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    await expectUnchanged(app, before);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 90_000, ledgerSum: 90_000, rows: 2 });
  });

  it('success › stores the client as sent, e-mail lower-cased', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const issued = await issuePass(app, reseller, pass.id, {
      first_name: '  Grace ',
      last_name: 'Hopper',
      email: 'Grace.Hopper@Example.COM',
      phone: '+1 555 0100',
      external_id: 'crm-42',
    });
    const [row] = await app.sql(
      'select reseller_id, first_name, last_name, email, phone, external_id, credit_balance::int as credit_balance from client where id = ?',
      [issued.client_id],
    );
    expect(row).toEqual({
      reseller_id: reseller.id,
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace.hopper@example.com',
      phone: '+1 555 0100',
      external_id: 'crm-42',
      credit_balance: 50,
    });
  });

  it('success › answers the issued_pass shape, field for field', async () => {
    app.clock.set(new Date('2027-03-15T09:30:00Z'));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { name: 'Gold', duration: 'MONTHLY' });
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      object: 'issued_pass',
      id: expect.stringMatching(/^ipass_[0-9A-Z]{26}$/),
      client_id: expect.stringMatching(/^client_[0-9A-Z]{26}$/),
      pass_id: pass.id,
      pass_name: 'Gold',
      passcode: expect.stringMatching(/^[A-Z0-9]{8}$/),
      status: 'ACTIVE',
      payment_model: 'PAYG',
      categories: [
        { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visits_allowed: 8, visits_used: 0, credit_allocated: 0 },
        { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, visits_used: 0, credit_allocated: 50 },
      ],
      start_date: '2027-03-15',
      expires_at: unix('2027-04-15T00:00:00Z'),
      paid_through: null,
      created: unix('2027-03-15T09:30:00Z'),
    });
  });

  it('two issues › get different clients and different passcodes', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const a = await issuePass(app, reseller, pass.id);
    const b = await issuePass(app, reseller, pass.id);
    expect(a.client_id).not.toBe(b.client_id);
    expect(a.passcode).not.toBe(b.passcode);
  });

  it('success › records issued_pass.created in the outbox with the pass as presented', async () => {
    const reseller = await createReseller(app, { balance: 10_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 1000 });
    const since = await lastOutboxId(app);
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id), idempotencyKey: 'evt-issue-1' });
    expect(res.status).toBe(201);
    const events = await outboxSince(app, since);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ topic: 'event', reseller_id: reseller.id });
    expect(events[0].payload).toMatchObject({
      object: 'event',
      type: 'issued_pass.created',
      data: { object: res.body },
      request: { id: res.headers.get('request-id'), idempotency_key: 'evt-issue-1' },
    });
  });

  it('failure › records no event', async () => {
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 1000 });
    const since = await lastOutboxId(app);
    expectError(await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) }), 422, 'insufficient_balance');
    expect(await outboxSince(app, since)).toEqual([]);
  });
});

describe('POST /issued_passes › start_date and expires_at', () => {
  async function issueAt(now: string, duration: 'MONTHLY' | 'QUARTERLY' | 'ANNUALLY', extra: Record<string, unknown> = {}) {
    app.clock.set(new Date(now));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { duration });
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id, extra) });
    expect(res.status, res.text).toBe(201);
    return res.body as { start_date: string; expires_at: number; status: string };
  }

  const cases: [string, string, 'MONTHLY' | 'QUARTERLY' | 'ANNUALLY', string, string][] = [
    ['MONTHLY mid-month', '2027-03-15T23:59:00Z', 'MONTHLY', '2027-03-15', '2027-04-15T00:00:00Z'],
    ['MONTHLY on 31 January', '2027-01-31T10:00:00Z', 'MONTHLY', '2027-01-31', '2027-02-28T00:00:00Z'],
    ['MONTHLY on 31 January of a leap year', '2028-01-31T10:00:00Z', 'MONTHLY', '2028-01-31', '2028-02-29T00:00:00Z'],
    ['MONTHLY on 31 March', '2027-03-31T00:00:00Z', 'MONTHLY', '2027-03-31', '2027-04-30T00:00:00Z'],
    ['MONTHLY in December', '2027-12-31T12:00:00Z', 'MONTHLY', '2027-12-31', '2028-01-31T00:00:00Z'],
    ['QUARTERLY on 30 November', '2026-11-30T08:00:00Z', 'QUARTERLY', '2026-11-30', '2027-02-28T00:00:00Z'],
    ['QUARTERLY mid-month', '2027-05-10T08:00:00Z', 'QUARTERLY', '2027-05-10', '2027-08-10T00:00:00Z'],
    ['ANNUALLY on 29 February', '2028-02-29T08:00:00Z', 'ANNUALLY', '2028-02-29', '2029-02-28T00:00:00Z'],
    ['ANNUALLY mid-year', '2027-06-01T08:00:00Z', 'ANNUALLY', '2027-06-01', '2028-06-01T00:00:00Z'],
  ];
  for (const [situation, now, duration, start, expires] of cases) {
    it(`no start_date, ${situation} › starts today (UTC) and expires ${expires.slice(0, 10)}`, async () => {
      const body = await issueAt(now, duration);
      expect(body.start_date).toBe(start);
      expect(body.expires_at).toBe(unix(expires));
      expect(body.status).toBe('ACTIVE');
    });
  }

  it('start_date today › is accepted', async () => {
    const body = await issueAt('2027-05-20T22:00:00Z', 'MONTHLY', { start_date: '2027-05-20' });
    expect(body.start_date).toBe('2027-05-20');
    expect(body.expires_at).toBe(unix('2027-06-20T00:00:00Z'));
  });

  it('a future start_date on the 31st › expires one month later, clamped to the month end', async () => {
    const body = await issueAt('2027-03-01T10:00:00Z', 'MONTHLY', { start_date: '2027-05-31' });
    expect(body.start_date).toBe('2027-05-31');
    expect(body.expires_at).toBe(unix('2027-06-30T00:00:00Z'));
  });

  it('a start_date in the past › answers 400 on start_date', async () => {
    app.clock.set(new Date('2027-05-20T00:30:00Z'));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const before = await dbState(app);
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id, { start_date: '2027-05-19' }) });
    expectError(res, 400, 'validation_error', 'start_date');
    await expectUnchanged(app, before);
  });

  it('GET after the expiry passes › reads EXPIRED', async () => {
    app.clock.set(new Date('2027-01-31T10:00:00Z'));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const issued = await issuePass(app, reseller, pass.id);
    app.clock.set(new Date('2027-02-27T23:59:59Z'));
    expect((await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key })).body.status).toBe('ACTIVE');
    app.clock.set(new Date('2027-02-28T00:00:00Z'));
    expect((await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key })).body.status).toBe('EXPIRED');
  });
});

describe('GET /issued_passes/{client_id}', () => {
  it("an own client › answers the client's issued pass, as issued", async () => {
    const reseller = await createReseller(app, { balance: 10_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 1000 });
    const issued = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    const res = await v3(app, `/issued_passes/${issued.body.client_id}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(issued.body);
  });

  it('visits used this month › are shown per category; last month’s read as zero', async () => {
    app.clock.set(new Date('2027-04-10T10:00:00Z'));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const issued = await issuePass(app, reseller, pass.id);
    await app.sql(`update issued_pass set visits_used = '{"GYM": 3}', visits_period = '2027-04' where id = ?`, [issued.id]);
    const gym = async () => (await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key })).body.categories[0];
    expect(await gym()).toMatchObject({ type: 'GYM', visits_used: 3, visits_allowed: 8 });
    app.clock.set(new Date('2027-05-01T00:00:00Z'));
    expect(await gym()).toMatchObject({ type: 'GYM', visits_used: 0 });
  });
});

describe('GET /clients/{client_id}', () => {
  it('an own client › answers the client with its active pass summary', async () => {
    app.clock.set(new Date('2027-07-04T12:00:00Z'));
    const reseller = await createReseller(app, { balance: 10_000 });
    const pass = await createPassPackage(app, reseller, { name: 'Silver', paymentModel: 'PREPAID', price: 1000 });
    const issued = await issuePass(app, reseller, pass.id, { email: 'Ada@Example.com', external_id: 'ext-1' });
    const res = await v3(app, `/clients/${issued.client_id}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'client',
      id: issued.client_id,
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      phone: null,
      external_id: 'ext-1',
      credit_balance: 50,
      active_pass: {
        id: issued.id,
        pass_id: pass.id,
        pass_name: 'Silver',
        status: 'ACTIVE',
        payment_model: 'PREPAID',
        expires_at: unix('2027-08-04T00:00:00Z'),
      },
      created: unix('2027-07-04T12:00:00Z'),
    });
  });

  it('after the expiry › the active pass summary reads EXPIRED', async () => {
    app.clock.set(new Date('2027-07-04T12:00:00Z'));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller);
    const issued = await issuePass(app, reseller, pass.id);
    app.clock.set(new Date('2027-08-05T00:00:00Z'));
    const res = await v3(app, `/clients/${issued.client_id}`, { key: reseller.key });
    expect(res.body.active_pass.status).toBe('EXPIRED');
  });
});

describe('GET /passes/{id}', () => {
  it('an own package › answers the pass shape, field for field', async () => {
    app.clock.set(new Date('2027-02-01T00:00:00Z'));
    const reseller = await createReseller(app);
    const pass = await createPassPackage(app, reseller, { name: 'Platinum', price: 9900, duration: 'QUARTERLY', paymentModel: 'PREPAID' });
    const res = await v3(app, `/passes/${pass.id}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'pass',
      id: pass.id,
      name: 'Platinum',
      description: 'A pass for tests',
      price: 9900,
      currency: 'EUR',
      duration: 'QUARTERLY',
      payment_model: 'PREPAID',
      categories: [
        { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visits_allowed: 8, credit_allocated: 0 },
        { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 50 },
      ],
      provider_count: 0,
      created: unix('2027-02-01T00:00:00Z'),
    });
  });
});
