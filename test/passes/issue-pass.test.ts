import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.ts';
import { businessLedger, clientBody, createPassPackage, createReseller, walletLedger } from '../support/factories.ts';
import { v3 } from '../support/http.ts';

let app: TestApp;
beforeAll(async () => { app = await startApp(); });
afterAll(async () => { await app?.close(); });

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
});
