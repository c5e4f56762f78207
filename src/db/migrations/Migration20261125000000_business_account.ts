import { Migration } from '@mikro-orm/migrations';

// The business account's balance moves out of the reseller row into a row of its own. Every
// write of a reseller's data (clients, bookings, ledgers, outbox, idempotency records) locks the
// reseller row FOR KEY SHARE through its foreign key; while the balance lived there, each debit
// updated that same row, and under concurrency PostgreSQL tracked the lockers and the updater as
// multixacts, and a debit had to come first in its transaction (docs/domain-rules.md "Money"). Nothing
// references business_account, so a debit locks only its own row, for as long as its
// transaction has left to run.
export class Migration20261125000000_business_account extends Migration {
  override name = 'Migration20261125000000_business_account';

  up(): void {
    this.addSql(`
      create table business_account (
        reseller_id text primary key references reseller (id),
        -- minor units of the reseller's currency; changed only together with a business_transaction row
        balance bigint not null default 0
      );
      insert into business_account (reseller_id, balance) select id, balance from reseller;
      alter table reseller drop column balance;
    `);
  }
}
