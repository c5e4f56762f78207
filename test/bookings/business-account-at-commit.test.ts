import pg from 'pg';
import { engineFromEnv } from '../../src/config.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { expectBookingInvariants, worldScope } from '../support/bookings-invariants.ts';
import { businessLedger, createPassPackage, createReseller, issuePass } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { until as waitUntil } from '../support/until.ts';

// Every co-pay confirm of a reseller debits its one business-account row. The debit is a ledger row,
// written with the confirm's other writes; the balance moves when the transaction commits (a
// deferred trigger: src/modules/ledger/ledger.service.ts), so the account's row lock is taken in
// COMMIT and held until COMMIT ends, and confirms of one reseller queue there only. The record's
// statement bounds its own wait with lock_timeout (IDEMPOTENCY_WAIT_MS, short here) and puts the
// setting back, so COMMIT waits for the account as long as it must.

const app = useApp({ IDEMPOTENCY_WAIT_MS: '300' }, { now: new Date('2026-03-02T08:00:00Z') });
const T = 60_000;
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

let blocker: pg.Client | undefined;
afterEach(async () => {
  await blocker?.end().catch(() => undefined);
  blocker = undefined;
});

let emails = 0;
const newClientId = async () => (await issuePass(app, w.reseller, w.passId, { email: `lock.${++emails}@example.com` })).client_id;

interface Confirm {
  path: string;
  body?: Record<string, unknown>;
  amount: number;
}

let spaSlot = 0;
/** A spa co-pay session (Gold Spa, massage: 4500), each at an hour of its own. */
async function spaConfirm(): Promise<Confirm> {
  const time = `${String(9 + spaSlot++).padStart(2, '0')}:00`;
  const res = await book.spa(app, w, {
    date: '2026-03-12',
    time,
    spa_id: w.copaySpa.id,
    service_ids: [w.copaySpa.massage],
    client_id: await newClientId(),
  });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY', copay_amount: 4500 });
  return { path: `/bookings/spa/${res.body.session_id}/confirm`, amount: 4500 };
}

/** A class co-pay session (Gold Gym, its option: 2500 for 3 visits). */
async function classConfirm(): Promise<Confirm> {
  const res = await book.cls(app, w, {
    class_instance_id: (await instanceIn(app, w.copayGym.classId, 30)).id,
    client_id: await newClientId(),
  });
  expect(res.body, res.text).toMatchObject({ status: 'AWAITING_COPAY' });
  return { path: `/bookings/class/${res.body.session_id}/confirm`, body: { copay_package_id: w.copayGym.optionId }, amount: 2500 };
}

const send = (c: Confirm, key: string) =>
  v3(app, c.path, { key: w.reseller.key, ...(c.body ? { body: c.body } : { method: 'POST' }), idempotencyKey: key });

describe.each([
  ['spa', spaConfirm],
  ['class', classConfirm],
] as const)('a %s co-pay confirm with an Idempotency-Key', (_, open) => {
  it(
    "moves the balance at COMMIT: no statement locks the account; its ledger row rides in the record's statement",
    async () => {
      const c = await open();
      const before = await businessLedger(app, w.reseller.id);
      app.queries!.reset();
      const res = await send(c, `order-${c.path}`);
      expect(res.status, res.text).toBe(201);
      const sql = app.queries!.ownStatements.map((q) => q.trim().toLowerCase());
      expect(
        sql.filter((q) => q.includes('business_account')),
        sql.join('\n'),
      ).toEqual([]);
      const record = sql.findIndex((q) => q.includes('insert into idempotency_record'));
      if (engineFromEnv() === 'tuned') {
        // The tuned engine queues the ledger row into the record's statement, sent with COMMIT (src/db/engine/README.md).
        expect(sql[record], sql.join('\n')).toContain('insert into business_transaction');
        expect(sql.slice(record + 1)).toEqual(['commit']);
      } else {
        // The plain engine sends it where it is issued, in the same transaction (an overdraft rolls it all back: below).
        expect(
          sql.filter((q) => q.includes('insert into business_transaction')),
          sql.join('\n'),
        ).toHaveLength(1);
      }

      const after = before.balance - c.amount;
      expect(await businessLedger(app, w.reseller.id)).toEqual({ balance: after, ledgerSum: after, rows: before.rows + 1 });
      // The trigger that moved the balance filled in the row's balance_after.
      const [row] = await app.sql<{ amount: string; balance_after: string }>(
        'select amount::text, balance_after::text from business_transaction where reference_id = ?',
        [res.body.booking_id ?? res.body.id],
      );
      expect(row).toEqual({ amount: String(c.amount), balance_after: String(after) });
    },
    T,
  );

  it(
    'waits in COMMIT for a business account locked longer than IDEMPOTENCY_WAIT_MS, then books and debits once',
    async () => {
      const c = await open();
      const before = await businessLedger(app, w.reseller.id);
      blocker = new pg.Client({ connectionString: app.databaseUrl });
      await blocker.connect();
      await blocker.query('begin');
      await blocker.query('select balance from business_account where reseller_id = $1 for update', [w.reseller.id]);

      const answer = send(c, `wait-${c.path}`);
      // The confirm has stored its record and waits in COMMIT, on the account's row.
      await waitUntil(
        async () =>
          (
            await app.sql<{ n: string }>(
              `select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and lower(query) = 'commit'`,
            )
          )[0].n === '1',
        'the confirm waits in COMMIT',
      );
      // Three times IDEMPOTENCY_WAIT_MS: a COMMIT still under the record's lock_timeout would have given up.
      await new Promise((r) => setTimeout(r, 900));
      await blocker.query('commit');

      const res = await answer;
      expect(res.status, res.text).toBe(201);
      expect(await businessLedger(app, w.reseller.id)).toEqual({
        balance: before.balance - c.amount,
        ledgerSum: before.balance - c.amount,
        rows: before.rows + 1,
      });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it(
    'an overdraft found at COMMIT › 422 insufficient_balance, stored under the key and replayed; nothing else written',
    async () => {
      const c = await open();
      const before = await businessLedger(app, w.reseller.id);
      // Take the balance down to less than the co-pay with a debit of its own, committed.
      const drain = before.balance - c.amount + 1;
      await app.sql(
        `with d as (insert into business_transaction (id, reseller_id, type, amount, description, created_at)
                   values ('btxn_drain_' || md5(random()::text), ?, 'DEBIT', ?, 'test: drain', now()) returning 1) select count(*) from d`,
        [w.reseller.id, drain],
      );
      const left = before.balance - drain;
      const bookings = async () =>
        Number((await app.sql<{ n: string }>('select count(*) as n from booking where reseller_id = ?', [w.reseller.id]))[0].n);
      const booked = await bookings();

      const first = await send(c, `overdraft-${c.path}`);
      expect(first.status, first.text).toBe(422);
      expect(first.body.error).toMatchObject({ code: 'insufficient_balance', type: 'unprocessable_error' });
      expect(first.body.error.message).toBe(`The business account balance (${left}) cannot pay ${c.amount}`);
      const replay = await send(c, `overdraft-${c.path}`);
      expect(replay.status).toBe(422);
      expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(await bookings()).toBe(booked);
      expect(await businessLedger(app, w.reseller.id)).toEqual({ balance: left, ledgerSum: left, rows: before.rows + 1 });
      await app.sql(
        `with d as (insert into business_transaction (id, reseller_id, type, amount, description, created_at)
                   values ('btxn_refill_' || md5(random()::text), ?, 'CREDIT', ?, 'test: refill', now()) returning 1) select count(*) from d`,
        [w.reseller.id, drain],
      );
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );
});

describe('GraphQL: each mutation field answers for its own debit', () => {
  // A field runs in a savepoint of the operation's transaction and settles its ledger rows at its
  // end (src/db/engine/transaction.ts), so an overdraft is that field's UnprocessableError, the other
  // fields keep their effects, and the operation commits.
  const ISSUE_TWO = `mutation Two($a: IssuePassInput!, $b: IssuePassInput!) {
    a: issuePass(input: $a) { __typename ... on UnprocessableError { code message } }
    b: issuePass(input: $b) { __typename ... on UnprocessableError { code message } }
  }`;

  it(
    "a field that settled its debit, then one whose own check waits for COMMIT (an access code's visit names the code before it is written) › both answer",
    async () => {
      const prepaid = await createPassPackage(app, w.reseller, { paymentModel: 'PREPAID', price: 100 });
      const clientId = await newClientId();
      const res = await gql<{ issuePass: { __typename: string }; createAccessCode: { __typename: string } }>(
        app,
        w.reseller.key,
        `mutation Both($issue: IssuePassInput!, $code: CreateAccessCodeInput!) {
      issuePass(input: $issue) { __typename }
      createAccessCode(input: $code) { __typename }
    }`,
        {
          issue: { passId: prepaid.id, firstName: 'Settled', lastName: 'First', email: 'settled.first@example.com' },
          code: { clientId, providerId: w.gym.id },
        },
      );
      expect(res.body.errors, res.text).toBeUndefined();
      expect(res.body.data, res.text).toEqual({
        issuePass: { __typename: 'IssuedPassPayload' },
        createAccessCode: { __typename: 'AccessCode' },
      });
      await expectBookingInvariants(app, worldScope(w));
    },
    T,
  );

  it.each([
    ['the first paid, the second refused', 600, 500, ['IssuedPassPayload', 'UnprocessableError']],
    ['the first refused, the second paid', 1_100, 500, ['UnprocessableError', 'IssuedPassPayload']],
  ] as const)(
    'two PREPAID passes, a balance of 1,000 › %s',
    async (_, priceA, priceB, answers) => {
      const reseller = await createReseller(app, { balance: 1_000 });
      const [a, b] = [
        await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: priceA }),
        await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: priceB }),
      ];
      const input = (passId: string, email: string) => ({ passId, firstName: 'Two', lastName: 'Fields', email });
      const res = await gql<{ a: { __typename: string }; b: { __typename: string } }>(app, reseller.key, ISSUE_TWO, {
        a: input(a.id, `a.${priceA}@example.com`),
        b: input(b.id, `b.${priceA}@example.com`),
      });
      expect(res.body.errors, res.text).toBeUndefined();
      expect([res.body.data!.a.__typename, res.body.data!.b.__typename], res.text).toEqual(answers);
      const refused = answers[0] === 'UnprocessableError' ? res.body.data!.a : res.body.data!.b;
      expect(refused).toMatchObject({ code: 'insufficient_balance' });

      const paid = answers[0] === 'IssuedPassPayload' ? priceA : priceB;
      expect(await businessLedger(app, reseller.id)).toEqual({ balance: 1_000 - paid, ledgerSum: 1_000 - paid, rows: 2 });
      const clients = await app.sql<{ email: string }>('select email from client where reseller_id = ?', [reseller.id]);
      expect(clients.map((c) => c.email)).toEqual([
        answers[0] === 'IssuedPassPayload' ? `a.${priceA}@example.com` : `b.${priceA}@example.com`,
      ]);
    },
    T,
  );
});
