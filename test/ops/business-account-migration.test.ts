import { describe, expect, it } from 'vitest';
import { onDatabaseMigratedTo } from '../support/migrations.ts';

// Migration20261125000000_business_account moves each reseller's balance into business_account
// (docs/domain-rules.md "Money"): on a database that already holds funded resellers, no balance may be lost.
describe('the business_account migration on an existing database', () => {
  it('gives every reseller its account with the balance its row held, and drops the old column', async () => {
    await onDatabaseMigratedTo('Migration20261124140000_hosted_sessions', async ({ sql, up }) => {
      await sql(`insert into reseller (id, name, currency, status, balance, created_at) values
        ('res_01J0000000000000000000000A', 'Funded', 'EUR', 'ACTIVE', 123456, now()),
        ('res_01J0000000000000000000000B', 'Empty', 'USD', 'DISABLED', 0, now())`);

      expect(await up('Migration20261125000000_business_account')).toEqual(['Migration20261125000000_business_account']);

      expect(await sql('select reseller_id, balance::text as balance from business_account order by reseller_id')).toEqual([
        { reseller_id: 'res_01J0000000000000000000000A', balance: '123456' },
        { reseller_id: 'res_01J0000000000000000000000B', balance: '0' },
      ]);
      expect(
        await sql("select column_name from information_schema.columns where table_name = 'reseller' and column_name = 'balance'"),
      ).toEqual([]);
    });
  });
});
