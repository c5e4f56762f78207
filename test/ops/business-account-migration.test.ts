import { randomBytes } from 'node:crypto';
import { describe, expect, it, inject } from 'vitest';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { openOrm } from '../../src/db/orm.ts';
import { withDatabase } from '../support/global-setup.ts';

// Migration20261125000000_business_account moves each reseller's balance into business_account
// (README "Bookings"): on a database that already holds funded resellers, no balance may be lost.
describe('the business_account migration on an existing database', () => {
  it('gives every reseller its account with the balance its row held, and drops the old column', async () => {
    const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
    await createDatabaseIfMissing(inject('adminUrl'), database);
    const orm = await openOrm(withDatabase(inject('adminUrl'), database), 2);
    try {
      await orm.migrator.up({ to: 'Migration20261124140000_hosted_sessions' });
      const sql = (q: string, params: unknown[] = []) => orm.em.fork().execute(q, params);
      await sql(`insert into reseller (id, name, currency, status, balance, created_at) values
        ('res_01J0000000000000000000000A', 'Funded', 'EUR', 'ACTIVE', 123456, now()),
        ('res_01J0000000000000000000000B', 'Empty', 'USD', 'DISABLED', 0, now())`);

      expect((await orm.migrator.up({ to: 'Migration20261125000000_business_account' })).map((m) => m.name)).toEqual(['Migration20261125000000_business_account']);

      expect(await sql('select reseller_id, balance::text as balance from business_account order by reseller_id')).toEqual([
        { reseller_id: 'res_01J0000000000000000000000A', balance: '123456' },
        { reseller_id: 'res_01J0000000000000000000000B', balance: '0' },
      ]);
      expect(await sql("select column_name from information_schema.columns where table_name = 'reseller' and column_name = 'balance'")).toEqual([]);
    } finally {
      await orm.close();
    }
  });
});
