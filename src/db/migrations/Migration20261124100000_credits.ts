import { Migration } from '@mikro-orm/migrations';

// Credits (docs/partner-guide.md "Credits"): credit packages a reseller sells, the purchases of them into a
// client's wallet, and two additions to the wallet ledger: the purchase a row belongs to, and
// `seq`, the order the wallet moved in.
export class Migration20261124100000_credits extends Migration {
  override name = 'Migration20261124100000_credits';

  up(): void {
    this.addSql(`
      -- Per reseller, in its currency; created by the operator (and seed --demo), listed through the API.
      create table credit_package (
        id text primary key,
        reseller_id text not null references reseller (id),
        name text not null,
        credits bigint not null check (credits > 0),
        price bigint not null check (price > 0),
        currency char(3) not null,
        created_at timestamptz not null
      );
      create index credit_package_reseller_idx on credit_package (reseller_id, id desc);

      -- The wallet ledger: the purchase a row belongs to (like booking_id, no foreign key: the
      -- purchase row is written after its ledger rows and references them).
      alter table credit_transaction add column credit_purchase_id text;

      -- The order the wallet moved in. A row's id is made before its statement waits for the
      -- client row's lock, so two concurrent changes may hold ids in the other order than their
      -- balance_after; seq is drawn when the row is inserted, after the lock, so it follows the
      -- balance. Existing rows are numbered in id order.
      create sequence credit_transaction_seq;
      alter table credit_transaction add column seq bigint;
      update credit_transaction t set seq = o.n
        from (select id, row_number() over (order by id) as n from credit_transaction) o where o.id = t.id;
      select setval('credit_transaction_seq', coalesce((select max(seq) from credit_transaction), 0) + 1, false);
      alter table credit_transaction alter column seq set default nextval('credit_transaction_seq');
      alter table credit_transaction alter column seq set not null;
      alter sequence credit_transaction_seq owned by credit_transaction.seq;
      create unique index credit_transaction_client_seq_idx on credit_transaction (client_id, seq desc);

      -- One row per purchase, written in the transaction that moved both balances.
      create table credit_purchase (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        credit_package_id text not null references credit_package (id),
        credits bigint not null check (credits > 0),
        amount bigint not null check (amount > 0),
        currency char(3) not null,
        balance_after bigint not null check (balance_after >= 0),
        business_transaction_id text not null references business_transaction (id),
        credit_transaction_id text not null references credit_transaction (id),
        created_at timestamptz not null
      );
      create index credit_purchase_client_idx on credit_purchase (client_id, id desc);
    `);
  }

  override down(): void {
    this.addSql(`
      drop table credit_purchase;
      drop index credit_transaction_client_seq_idx;
      alter table credit_transaction drop column seq, drop column credit_purchase_id;
      drop table credit_package;
    `);
  }
}
