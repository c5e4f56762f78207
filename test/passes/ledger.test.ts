import { describe, expect, it } from 'vitest';
import { fundReseller } from '../../src/modules/resellers/index.ts';
import type { Duration, PassCategory } from '../../src/modules/passes/passes.entity.ts';
import { addDuration, daysInPeriodEnding } from '../../src/modules/passes/index.ts';
import { useApp } from '../support/app.ts';
import { businessLedger, clientBody, createPassPackage, createReseller, walletLedger, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { expectUnchanged } from '../support/assertions.ts';
import { dbState } from '../support/db-state.ts';

const app = useApp();

/** mulberry32: a small seeded PRNG, so the sequence is the same on every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
  };
}

interface ModelPackage {
  id: string;
  price: number;
  paymentModel: 'PAYG' | 'PREPAID';
  credits: number;
  duration: Duration;
}
interface ModelClient {
  id: string;
  pkg: ModelPackage;
  wallet: number;
  expires: Date;
  paidThrough: Date | null;
}

/**
 * The money of a package change as docs/domain-rules.md "Decisions recorded here" states it: the unused whole days of a
 * PREPAID period come back with the same share of its credits; credits already spent shrink the
 * refund in proportion.
 */
function leavingPrepaid(c: ModelClient, now: Date): { refund: number; creditsBack: number } {
  if (c.pkg.paymentModel !== 'PREPAID' || !c.paidThrough || c.paidThrough <= now) return { refund: 0, creditsBack: 0 };
  const daysLeft = BigInt(Math.floor((c.paidThrough.getTime() - now.getTime()) / 86_400_000));
  const inPeriod = BigInt(daysInPeriodEnding(c.paidThrough, c.pkg.duration));
  const due = (BigInt(c.pkg.credits) * daysLeft) / inPeriod;
  if (due === 0n) return { refund: Number((BigInt(c.pkg.price) * daysLeft) / inPeriod), creditsBack: 0 };
  const taken = BigInt(c.wallet) < due ? BigInt(c.wallet) : due;
  return { refund: Number((BigInt(c.pkg.price) * daysLeft * taken) / (inPeriod * due)), creditsBack: Number(taken) };
}
interface ModelReseller {
  r: TestReseller;
  balance: number;
  packages: ModelPackage[];
  clients: ModelClient[];
}

const categories = (credits: number): PassCategory[] => [
  { type: 'GYM', tiers: ['BRONZE'], visits_allowed: 8, credit_allocated: 0 },
  ...(credits > 0 ? [{ type: 'SPA' as const, tiers: ['SILVER'], visits_allowed: null, credit_allocated: credits }] : []),
];

/**
 * Every balance_after continues the previous one: the ledger is a chain, not just a sum. Rows are
 * taken in the order the balance moved (each one's balance_after is the running balance plus its
 * amount): two concurrent writes may take their ids in one order and the balance's lock in the other.
 */
async function expectChained(table: 'business_transaction' | 'credit_transaction', column: 'reseller_id' | 'client_id', ownerId: string) {
  const rows = await app.sql<{ type: string; amount: string; balance_after: string }>(
    `select type, amount::text, balance_after::text from ${table} where ${column} = ? order by id`,
    [ownerId],
  );
  let running = 0;
  const left = [...rows];
  while (left.length > 0) {
    const next = left.findIndex(
      (row) => Number(row.balance_after) === running + (row.type === 'CREDIT' ? Number(row.amount) : -Number(row.amount)),
    );
    expect(next, `no ${table} row continues the balance ${running}: ${JSON.stringify(left)}`).toBeGreaterThanOrEqual(0);
    running = Number(left[next].balance_after);
    left.splice(next, 1);
  }
}

describe('business account and wallet ledgers', () => {
  it('a seeded random sequence of issues, renewals, changes and fundings › every ledger sums to its balance and matches the model', async () => {
    const rand = prng(20261122);
    app.clock.set(new Date('2027-01-01T09:00:00Z'));
    const resellers: ModelReseller[] = [];
    for (let i = 0; i < 3; i++) {
      const balance = rand.int(0, 4) * 2500;
      const r = await createReseller(app, { name: `Ledger ${i}`, balance });
      const packages: ModelPackage[] = [];
      for (const [paymentModel, price, credits] of [
        ['PAYG', 4000, 30],
        ['PREPAID', rand.int(10, 60) * 100, 50],
        ['PREPAID', rand.int(10, 60) * 100, 0],
      ] as const) {
        const duration = rand.pick(['MONTHLY', 'QUARTERLY', 'ANNUALLY'] as const);
        const pkg = await createPassPackage(app, r, { paymentModel, price, categories: categories(credits), duration });
        packages.push({ id: pkg.id, price, paymentModel, credits, duration });
      }
      resellers.push({ r, balance, packages, clients: [] });
    }

    const outcomes: Record<string, number> = {};
    const count = (what: string) => {
      outcomes[what] = (outcomes[what] ?? 0) + 1;
    };

    for (let step = 0; step < 60; step++) {
      const m = rand.pick(resellers);
      const op = rand.pick(['issue', 'issue', 'issue', 'renew', 'renew', 'update', 'update', 'update', 'fund', 'time'] as const);
      const label = `step ${step} ${op} on ${m.r.id}`;
      if (op === 'issue') {
        const pkg = rand.pick(m.packages);
        const viaGraphQL = rand.int(0, 1) === 1;
        const affordable = pkg.paymentModel === 'PAYG' || m.balance >= pkg.price;
        const before = affordable ? undefined : await dbState(app);
        let clientId: string | undefined;
        if (viaGraphQL) {
          const res = await gql(
            app,
            m.r.key,
            `mutation($i: IssuePassInput!) { issuePass(input: $i) {
            __typename ... on IssuedPassPayload { issuedPass { client { id } } } ... on Error { code } } }`,
            { i: { passId: pkg.id, firstName: 'Step', lastName: String(step), email: `step${step}@example.com` } },
          );
          const result = res.body.data?.issuePass;
          if (affordable) {
            expect(result?.__typename, label).toBe('IssuedPassPayload');
            clientId = result.issuedPass.client.id;
          } else {
            expect(result, label).toMatchObject({ __typename: 'UnprocessableError', code: 'insufficient_balance' });
          }
        } else {
          const res = await v3(app, '/issued_passes', { key: m.r.key, body: clientBody(pkg.id, { email: `step${step}@example.com` }) });
          if (affordable) {
            expect(res.status, `${label}: ${res.text}`).toBe(201);
            clientId = res.body.client_id;
          } else {
            expect(res.status, label).toBe(422);
            expect(res.body.error.code).toBe('insufficient_balance');
          }
        }
        if (clientId) {
          if (pkg.paymentModel === 'PREPAID') m.balance -= pkg.price;
          const expires = addDuration(new Date(`${app.clock.now().toISOString().slice(0, 10)}T00:00:00Z`), pkg.duration);
          m.clients.push({ id: clientId, pkg, wallet: pkg.credits, expires, paidThrough: pkg.paymentModel === 'PREPAID' ? expires : null });
          count(`issue ${pkg.paymentModel}`);
        } else {
          await expectUnchanged(app, before!);
          count('issue refused');
        }
      } else if (op === 'renew' && m.clients.length > 0) {
        const c = rand.pick(m.clients);
        const refused = c.pkg.paymentModel === 'PAYG' || m.balance < c.pkg.price;
        const before = refused ? await dbState(app) : undefined;
        const res = await v3(app, `/issued_passes/${c.id}/renew`, { key: m.r.key, method: 'POST' });
        if (before) await expectUnchanged(app, before);
        if (c.pkg.paymentModel === 'PAYG') {
          expect(res.status, label).toBe(409);
          expect(res.body.error.code).toBe('not_prepaid');
          count('renew PAYG refused');
        } else if (m.balance >= c.pkg.price) {
          expect(res.status, `${label}: ${res.text}`).toBe(201);
          expect(res.body.amount).toBe(c.pkg.price);
          m.balance -= c.pkg.price;
          c.wallet += c.pkg.credits;
          const now = app.clock.now();
          c.expires = addDuration(c.expires > now ? c.expires : now, c.pkg.duration);
          if (!c.paidThrough || c.paidThrough < c.expires) c.paidThrough = c.expires;
          count('renew');
        } else {
          expect(res.status, label).toBe(422);
          expect(res.body.error.code).toBe('insufficient_balance');
          count('renew refused');
        }
      } else if (op === 'update' && m.clients.length > 0) {
        const c = rand.pick(m.clients);
        const pkg = rand.pick(m.packages);
        const now = app.clock.now();
        const back = leavingPrepaid(c, now);
        const affordable = pkg.paymentModel === 'PAYG' || m.balance + back.refund >= pkg.price;
        const before = pkg.id === c.pkg.id || !affordable ? await dbState(app) : undefined;
        const res = await v3(app, '/issued_passes/update', { key: m.r.key, body: { client_id: c.id, pass_id: pkg.id } });
        if (pkg.id === c.pkg.id) {
          expect(res.status, label).toBe(409);
          expect(res.body.error.code).toBe('pass_unchanged');
          count('update refused (same package)');
        } else if (!affordable) {
          expect(res.status, label).toBe(422);
          expect(res.body.error.code).toBe('insufficient_balance');
          count('update refused (balance)');
        } else {
          expect(res.status, `${label}: ${res.text}`).toBe(200);
          m.balance += back.refund;
          c.wallet -= back.creditsBack;
          if (pkg.paymentModel === 'PREPAID') {
            m.balance -= pkg.price;
            c.wallet += pkg.credits;
            c.expires = addDuration(now, pkg.duration);
            c.paidThrough = c.expires;
          } else {
            c.paidThrough = null;
          }
          expect(res.body.expires_at, label).toBe(Math.floor(c.expires.getTime() / 1000));
          expect(res.body.paid_through, label).toBe(c.paidThrough && Math.floor(c.paidThrough.getTime() / 1000));
          c.pkg = pkg;
          count(`update ${back.refund > 0 ? 'with refund ' : ''}to ${pkg.paymentModel}`);
        }
        if (before) await expectUnchanged(app, before);
      } else if (op === 'fund') {
        const amount = rand.int(1, 8) * 1000;
        await app.orm.em.fork().transactional((tx) => fundReseller(tx, m.r.id, amount, app.clock.now()));
        m.balance += amount;
        count('fund');
      } else {
        app.clock.advance(rand.int(1, 45) * 86_400_000);
        count('time');
      }
    }

    // The sequence exercised what it is meant to (the seed is fixed, so this is stable).
    expect(outcomes['issue PREPAID']).toBeGreaterThan(0);
    expect(outcomes['issue refused']).toBeGreaterThan(0);
    expect(outcomes.renew).toBeGreaterThan(0);
    expect(outcomes.fund).toBeGreaterThan(0);
    const times = (...what: string[]) => what.reduce((n, w) => n + (outcomes[w] ?? 0), 0);
    expect(times('update with refund to PREPAID', 'update with refund to PAYG'), JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(times('update to PREPAID', 'update with refund to PREPAID'), JSON.stringify(outcomes)).toBeGreaterThan(0);

    for (const m of resellers) {
      const ledger = await businessLedger(app, m.r.id);
      expect(ledger.ledgerSum, `reseller ${m.r.id}`).toBe(ledger.balance);
      expect(ledger.balance, `reseller ${m.r.id}`).toBe(m.balance);
      await expectChained('business_transaction', 'reseller_id', m.r.id);
      for (const c of m.clients) {
        const wallet = await walletLedger(app, c.id);
        expect(wallet.ledgerSum, `client ${c.id}`).toBe(wallet.balance);
        expect(wallet.balance, `client ${c.id}`).toBe(c.wallet);
        await expectChained('credit_transaction', 'client_id', c.id);
      }
    }
    const [orphans] = await app.sql<{ n: string }>(
      `select count(*)::text as n from client c where not exists (select 1 from issued_pass p where p.client_id = c.id)`,
    );
    expect(orphans.n).toBe('0');
  });

  it('parallel PREPAID issues on a balance that pays for three › exactly three succeed and the ledger sums', async () => {
    const reseller = await createReseller(app, { balance: 9000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 3000 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id, { email: `p${i}@example.com` }) }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 422, 422, 422]);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 0, ledgerSum: 0, rows: 4 });
    const [clients] = await app.sql<{ n: string }>('select count(*)::text as n from client where reseller_id = ?', [reseller.id]);
    expect(clients.n).toBe('3');
    await expectChained('business_transaction', 'reseller_id', reseller.id);
  });

  it('parallel PREPAID issues, each with its own Idempotency-Key › exactly three succeed, none fails with 5xx', async () => {
    const reseller = await createReseller(app, { balance: 9000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 3000 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        v3(app, '/issued_passes', {
          key: reseller.key,
          body: clientBody(pass.id, { email: `k${i}@example.com` }),
          idempotencyKey: `parallel-${i}`,
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 422, 422, 422]);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 0, ledgerSum: 0, rows: 4 });
  });

  it('parallel renewals of one PREPAID pass › each debit is recorded once and the periods stack', async () => {
    app.clock.set(new Date('2027-01-10T00:00:00Z'));
    const reseller = await createReseller(app, { balance: 10_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 1000 });
    const issued = await v3(app, '/issued_passes', { key: reseller.key, body: clientBody(pass.id) });
    const results = await Promise.all(
      Array.from({ length: 4 }, () => v3(app, `/issued_passes/${issued.body.client_id}/renew`, { key: reseller.key, method: 'POST' })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(results.map((r) => r.body.new_expires_at).sort()).toEqual(
      ['2027-03-10', '2027-04-10', '2027-05-10', '2027-06-10'].map((d) => Date.parse(`${d}T00:00:00Z`) / 1000),
    );
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 5000, ledgerSum: 5000, rows: 6 });
    expect(await walletLedger(app, issued.body.client_id)).toEqual({ balance: 250, ledgerSum: 250 });
    await expectChained('credit_transaction', 'client_id', issued.body.client_id);
  });
});
