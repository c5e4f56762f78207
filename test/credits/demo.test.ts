import { beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoSeed } from '../../src/db/seed.ts';
import { useApp } from '../support/app.ts';
import { businessLedger, walletLedger } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';

// `seed --demo` gives every demo reseller credit packages (docs/partner-guide.md "Credits"), and a demo client
// can buy one with the demo key right away.

const app = useApp();
let seeded: DemoSeed;

beforeAll(async () => {
  seeded = (await seedDemo(app.orm.em.fork(), app.clock.now()))!;
}, 120_000);

describe('seed --demo credit packages', () => {
  it('each demo reseller has three packages in its currency, listed with its key and reported by the seed', async () => {
    expect(seeded.resellers.length).toBeGreaterThanOrEqual(2);
    const seen = new Set<string>();
    for (const r of seeded.resellers) {
      const res = await v3(app, '/credit_packages', { key: r.api_key });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toHaveLength(3);
      for (const p of res.body.data) {
        expect(p).toMatchObject({ object: 'credit_package', currency: r.currency });
        expect(p.credits).toBeGreaterThan(0);
        expect(p.price).toBeGreaterThan(0);
        seen.add(p.id);
      }
      expect(
        res.body.data
          .map((p: Record<string, unknown>) => ({ id: p.id, name: p.name, credits: p.credits, price: p.price }))
          .sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)),
      ).toEqual([...r.credit_packages].sort((a, b) => a.id.localeCompare(b.id)));
      const graphql = await gql(app, r.api_key, '{ creditPackages(first: 10) { edges { node { id } } } }');
      expect(graphql.body.data.creditPackages.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
        res.body.data.map((p: { id: string }) => p.id),
      );
    }
    expect(seen.size).toBe(3 * seeded.resellers.length); // each reseller its own
  });

  it('a demo client buys a package: the wallet and the business account move, the balance shows it', async () => {
    const r = seeded.resellers[0];
    const client = r.bookings.client_id;
    const [cheapest] = [...r.credit_packages].sort((a, b) => a.price - b.price);
    const wallet = await walletLedger(app, client);
    const business = await businessLedger(app, r.id);
    const res = await v3(app, '/credit_purchases', {
      key: r.api_key,
      body: { client_id: client, credit_package_id: cheapest.id },
      idempotencyKey: 'demo-buy',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      client_id: client,
      credits: cheapest.credits,
      amount: cheapest.price,
      balance: wallet.balance + cheapest.credits,
      currency: r.currency,
    });
    expect(await walletLedger(app, client)).toEqual({
      balance: wallet.balance + cheapest.credits,
      ledgerSum: wallet.balance + cheapest.credits,
    });
    expect(await businessLedger(app, r.id)).toEqual({
      balance: business.balance - cheapest.price,
      ledgerSum: business.balance - cheapest.price,
      rows: business.rows + 1,
    });
    const credits = await v3(app, `/clients/${client}/credits`, { key: r.api_key });
    expect(credits.body.balance).toBe(wallet.balance + cheapest.credits);
    expect(credits.body.transactions[0]).toMatchObject({
      type: 'CREDIT',
      amount: cheapest.credits,
      balance_after: credits.body.balance,
      credit_purchase_id: res.body.id,
    });
  });
});
