import { newId } from '../../src/platform/ids.ts';
import { createApiKey, createReseller as createResellerRow, fundReseller, setResellerStatus } from '../../src/modules/resellers/index.ts';
import { PassPackageSchema, type Duration, type PassCategory, type PaymentModel } from '../../src/modules/passes/passes.entity.ts';
import type { TestApp } from './app.ts';
import { v3 } from './http.ts';

// Factories create what an operator would (resellers, keys, packages) through the services the
// CLI uses; everything a reseller does goes through HTTP.

export interface TestReseller {
  id: string;
  key: string;
  currency: string;
}

export async function createReseller(
  app: TestApp,
  opts: { name?: string; balance?: number; currency?: string; disabled?: boolean } = {},
): Promise<TestReseller> {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const reseller = await createResellerRow(em, { name: opts.name ?? 'Test Reseller', currency: opts.currency ?? 'EUR' }, at);
  if (opts.balance) await em.transactional((tx) => fundReseller(tx, reseller.id, opts.balance!, at));
  const key = await createApiKey(em, reseller.id, at);
  if (opts.disabled) await setResellerStatus(em, reseller.id, 'DISABLED');
  return { id: reseller.id, key: key.secret, currency: reseller.currency };
}

export const defaultCategories: PassCategory[] = [
  { type: 'GYM', tiers: ['BRONZE', 'SILVER'], visits_allowed: 8, credit_allocated: 0 },
  { type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 50 },
];

export async function createPassPackage(
  app: TestApp,
  reseller: TestReseller,
  opts: {
    name?: string;
    price?: number;
    duration?: Duration;
    paymentModel?: PaymentModel;
    categories?: PassCategory[];
  } = {},
) {
  const em = app.orm.em.fork();
  const at = app.clock.now();
  const pass = em.create(PassPackageSchema, {
    id: newId('pass', at.getTime()),
    resellerId: reseller.id,
    name: opts.name ?? 'Test Pass',
    description: 'A pass for tests',
    price: opts.price ?? 5000,
    currency: reseller.currency,
    duration: opts.duration ?? 'MONTHLY',
    paymentModel: opts.paymentModel ?? 'PAYG',
    categories: opts.categories ?? defaultCategories,
    createdAt: at,
  });
  await em.flush();
  return pass;
}

export function clientBody(passId: string, extra: Record<string, unknown> = {}) {
  return { pass_id: passId, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', ...extra };
}

/** Issues a pass over REST and fails the test unless it was created. */
export async function issuePass(app: TestApp, reseller: TestReseller, passId: string, extra: Record<string, unknown> = {}) {
  const res = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(passId, extra) });
  if (res.status !== 201) throw new Error(`issuing a pass failed: ${res.status} ${res.text}`);
  return res.body as { id: string; client_id: string; passcode: string; expires_at: number; paid_through: number | null; status: string };
}

export async function businessLedger(app: TestApp, resellerId: string) {
  const [row] = await app.sql<{ balance: string; ledger: string | null; rows: string }>(
    `select r.balance, (select sum(case when type = 'CREDIT' then amount else -amount end) from business_transaction where reseller_id = r.reseller_id) as ledger,
            (select count(*) from business_transaction where reseller_id = r.reseller_id) as rows
       from business_account r where r.reseller_id = ?`,
    [resellerId],
  );
  return { balance: Number(row.balance), ledgerSum: Number(row.ledger ?? 0), rows: Number(row.rows) };
}

export async function walletLedger(app: TestApp, clientId: string) {
  const [row] = await app.sql<{ balance: string; ledger: string | null }>(
    `select c.credit_balance as balance, (select sum(case when type = 'CREDIT' then amount else -amount end) from credit_transaction where client_id = c.id) as ledger
       from client c where c.id = ?`,
    [clientId],
  );
  return { balance: Number(row.balance), ledgerSum: Number(row.ledger ?? 0) };
}
