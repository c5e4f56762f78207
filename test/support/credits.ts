import { expect } from 'vitest';
import { createCreditPackage as createCreditPackageRow } from '../../src/modules/credits/index.ts';
import { withTransaction } from '../../src/db/engine/index.ts';
import type { TestApp } from './app.ts';
import { registerDbTable } from './db-state.ts';
import type { TestReseller } from './factories.ts';
import { v3, type Reply } from './http.ts';

// Credits (docs/partner-guide.md "Credits"): credit packages are made as the operator makes them (the service
// seed --demo uses); everything a reseller does goes through HTTP. Credits' tables join every
// dbState, so a refused request is seen to write nothing there either.

registerDbTable('credit_package');
registerDbTable('credit_purchase');

export interface TestCreditPackage {
  id: string;
  name: string;
  credits: number;
  price: number;
  currency: string;
}

let made = 0;

/** A credit package of `reseller`, in its currency, created at the app's now. */
export async function createCreditPackage(
  app: TestApp,
  reseller: TestReseller,
  opts: { name?: string; credits?: number; price?: number } = {},
): Promise<TestCreditPackage> {
  const em = app.orm.em.fork();
  const pkg = await withTransaction(em, async (tx) => {
    const row = createCreditPackageRow(tx, {
      resellerId: reseller.id,
      name: opts.name ?? `Credits ${++made}`,
      credits: opts.credits ?? 100,
      price: opts.price ?? 4000,
      currency: reseller.currency,
      createdAt: app.clock.now(),
    });
    await tx.flush();
    return row;
  });
  return { id: pkg.id, name: pkg.name, credits: pkg.credits, price: pkg.price, currency: pkg.currency };
}

/** POST /credit_purchases as the reseller. */
export const purchase = (app: TestApp, reseller: TestReseller, body: unknown, idempotencyKey?: string): Promise<Reply> =>
  v3(app, '/credit_purchases', { key: reseller.key, body, idempotencyKey });

/** A purchase that must succeed (201); its `credit_purchase`. */
export async function purchased(app: TestApp, reseller: TestReseller, clientId: string, packageId: string, idempotencyKey?: string) {
  const res = await purchase(app, reseller, { client_id: clientId, credit_package_id: packageId }, idempotencyKey);
  expect(res.status, res.text).toBe(201);
  return res.body as {
    id: string;
    client_id: string;
    credit_package_id: string;
    credits: number;
    amount: number;
    currency: string;
    balance: number;
    created: number;
  };
}

export interface WalletRow {
  id: string;
  type: 'CREDIT' | 'DEBIT';
  amount: number;
  balance_after: number;
}

/** A client's wallet rows in the order the balance moved (`seq`), read from the database. */
export async function walletRowsInBalanceOrder(app: TestApp, clientId: string): Promise<WalletRow[]> {
  const rows = await app.sql<{ id: string; type: 'CREDIT' | 'DEBIT'; amount: string; balance_after: string }>(
    'select id, type, amount, balance_after from credit_transaction where client_id = ? order by seq',
    [clientId],
  );
  return rows.map((r) => ({ id: r.id, type: r.type, amount: Number(r.amount), balance_after: Number(r.balance_after) }));
}

/**
 * Rows listed newest first form a chain: each one's balance_after is the next (older) one's plus
 * or minus its amount, and the oldest continues `startsFrom` (an empty wallet, for a whole wallet).
 */
export function expectChainNewestFirst(
  rows: { type: string; amount: number; balance_after: number }[],
  label = 'wallet',
  startsFrom = 0,
): void {
  rows.forEach((row, i) => {
    const before = i + 1 < rows.length ? rows[i + 1].balance_after : startsFrom;
    expect(row.balance_after, `${label}: row ${i} (${JSON.stringify(row)}) continues ${before}`).toBe(
      before + (row.type === 'CREDIT' ? row.amount : -row.amount),
    );
  });
}
