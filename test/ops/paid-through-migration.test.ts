import { describe, expect, it } from 'vitest';
import { onDatabaseMigratedTo } from '../support/migrations.ts';

// Migration20261128000000_paid_through brings existing data into docs/domain-rules.md "Decisions recorded here" and
// "Lookup": each PREPAID pass gets the paid_through its ledger paid for, and lookups at an issuer
// that has lookup off are REVOKED. It moves no money: every ledger still sums to its balance.
const R = { off: 'res_01J00000000000000000000OFF', on: 'res_01J000000000000000000000ON', asker: 'res_01J00000000000000000000ASK' };
const monthly = (id: string, price: number, model = 'PREPAID') =>
  `('${id}', '${R.off}', '${id}', ${price}, 'EUR', 'MONTHLY', '${model}', '[]', now())`;

describe('the paid_through migration on an existing database', () => {
  it('replays each PREPAID pass’s paid periods, revokes lookups at issuers with lookup off, and moves no money', async () => {
    await onDatabaseMigratedTo('Migration20261127050000_pass_expiry_index', async ({ sql, up }) => {
      await sql(`insert into reseller (id, name, currency, status, lookup_enabled, created_at) values
        ('${R.off}', 'Off', 'EUR', 'ACTIVE', false, now()), ('${R.on}', 'On', 'EUR', 'ACTIVE', true, now()),
        ('${R.asker}', 'Asker', 'EUR', 'ACTIVE', false, now())`);
      await sql(`insert into business_account (reseller_id, balance) values ('${R.off}', 0), ('${R.on}', 0), ('${R.asker}', 0)`);
      await sql(`insert into pass_package (id, reseller_id, name, price, currency, duration, payment_model, categories, created_at) values
        ${monthly('pass_A', 3000)}, ${monthly('pass_F', 0)}, ${monthly('pass_P', 0, 'PAYG')}`);
      const passes: [string, string, string, string][] = [
        // id, package, payment model, expires_at
        ['early', 'pass_A', 'PREPAID', '2100-01-01T00:00:00Z'], // renewed early, then extended for free to 2100
        ['late', 'pass_A', 'PREPAID', '2027-05-05T10:00:00Z'], // expired, then renewed late
        ['unpaid', 'pass_A', 'PREPAID', '2027-02-10T00:00:00Z'], // moved from PAYG when that moved no money
        ['free', 'pass_F', 'PREPAID', '2027-02-10T00:00:00Z'],
        ['payg', 'pass_P', 'PAYG', '2027-02-10T00:00:00Z'],
      ];
      for (const [name, pass, model, expires] of passes) {
        await sql(
          `insert into client (id, reseller_id, first_name, last_name, email, created_at) values (?, '${R.off}', 'A', 'B', 'a@example.com', now())`,
          [`client_${name}`],
        );
        await sql(
          `insert into issued_pass (id, reseller_id, client_id, pass_id, passcode, status, payment_model, start_date, expires_at, visits_period, created_at, updated_at)
          values (?, '${R.off}', ?, ?, ?, 'ACTIVE', ?, '2027-01-10', ?, '2027-01', now(), now())`,
          [`ipass_${name}`, `client_${name}`, pass, name.toUpperCase().padEnd(8, 'X').slice(0, 8), model, expires],
        );
      }
      const ledger: [string, string, number, string, string | null][] = [
        ['btxn_01', 'CREDIT', 100_000, '2027-01-01T00:00:00Z', null],
        ['btxn_02', 'DEBIT', 3000, '2027-01-10T09:00:00Z', 'ipass_early'],
        ['btxn_03', 'DEBIT', 3000, '2027-01-20T09:00:00Z', 'ipass_early'],
        ['btxn_04', 'DEBIT', 3000, '2027-01-10T09:00:00Z', 'ipass_late'],
        ['btxn_05', 'DEBIT', 3000, '2027-04-05T10:00:00Z', 'ipass_late'],
      ];
      for (const [id, type, amount, at, ref] of ledger) {
        await sql(
          `insert into business_transaction (id, reseller_id, type, amount, description, reference_id, created_at) values (?, '${R.off}', ?, ?, 'x', ?, ?)`,
          [id, type, amount, ref, at],
        );
      }
      const lookups: [string, string, string][] = [
        ['l_active_off', R.off, 'ACTIVE'],
        ['l_pending_off', R.off, 'PENDING'],
        ['l_failed_off', R.off, 'FAILED'],
      ];
      for (const [id, issuer, status] of lookups) {
        await sql(
          `insert into lookup (id, reseller_id, issuer_id, client_id, issued_pass_id, status, code_hash, attempts_remaining, expires_at, created_at, updated_at)
          values (?, '${R.asker}', ?, 'client_early', 'ipass_early', ?, 'x', 5, now(), now(), now())`,
          [id, issuer, status],
        );
      }
      await sql(
        `insert into client (id, reseller_id, first_name, last_name, email, created_at) values ('client_on', '${R.on}', 'A', 'B', 'a@example.com', now())`,
      );
      await sql(
        `insert into pass_package (id, reseller_id, name, price, currency, duration, payment_model, categories, created_at) values ('pass_on', '${R.on}', 'On', 0, 'EUR', 'MONTHLY', 'PAYG', '[]', now())`,
      );
      await sql(`insert into issued_pass (id, reseller_id, client_id, pass_id, passcode, status, payment_model, start_date, expires_at, visits_period, created_at, updated_at)
        values ('ipass_on', '${R.on}', 'client_on', 'pass_on', 'ONONONON', 'ACTIVE', 'PAYG', '2027-01-10', '2027-02-10', '2027-01', now(), now())`);
      await sql(`insert into lookup (id, reseller_id, issuer_id, client_id, issued_pass_id, status, code_hash, attempts_remaining, expires_at, created_at, updated_at)
        values ('l_active_on', '${R.asker}', '${R.on}', 'client_on', 'ipass_on', 'ACTIVE', 'x', 5, now(), now(), now())`);
      const balances = () =>
        sql(`select a.reseller_id, a.balance::text as balance,
          coalesce((select sum(case when type = 'CREDIT' then amount else -amount end) from business_transaction t where t.reseller_id = a.reseller_id), 0)::text as ledger
        from business_account a order by a.reseller_id`);
      const before = await balances();
      expect(before.find((b) => b.reseller_id === R.off)).toMatchObject({ balance: '88000', ledger: '88000' });

      expect(await up('Migration20261128000000_paid_through')).toEqual(['Migration20261128000000_paid_through']);

      const paid = await sql(`select id, to_char(paid_through at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as paid_through,
          to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as expires_at from issued_pass order by id`);
      expect(paid).toEqual([
        // issue: 01-10 + 1 month; the early renewal: from the period paid (02-10), one more month
        { id: 'ipass_early', paid_through: '2027-03-10T00:00:00Z', expires_at: '2100-01-01T00:00:00Z' },
        { id: 'ipass_free', paid_through: '2027-02-10T00:00:00Z', expires_at: '2027-02-10T00:00:00Z' },
        // the late renewal: from its own time, one month
        { id: 'ipass_late', paid_through: '2027-05-05T10:00:00Z', expires_at: '2027-05-05T10:00:00Z' },
        { id: 'ipass_on', paid_through: null, expires_at: '2027-02-10T00:00:00Z' },
        { id: 'ipass_payg', paid_through: null, expires_at: '2027-02-10T00:00:00Z' },
        { id: 'ipass_unpaid', paid_through: '2027-01-10T00:00:00Z', expires_at: '2027-02-10T00:00:00Z' },
      ]);
      expect(await sql('select id, status from lookup order by id')).toEqual([
        { id: 'l_active_off', status: 'REVOKED' },
        { id: 'l_active_on', status: 'ACTIVE' },
        { id: 'l_failed_off', status: 'FAILED' },
        { id: 'l_pending_off', status: 'REVOKED' },
      ]);
      const after = await balances();
      expect(after).toEqual(before);
      for (const b of after) expect(b.balance, b.reseller_id as string).toBe(b.ledger);
    });
  });
});
