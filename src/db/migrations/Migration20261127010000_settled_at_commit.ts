import { Migration } from '@mikro-orm/migrations';

// The business account moves only by its ledger, and at COMMIT. A business_transaction row is
// inserted like any other write (queued with the use case's others: src/db/engine/prepared-read.ts);
// a deferred constraint trigger then applies it to business_account when the transaction commits,
// refusing an overdraft, and fills in the row's balance_after. Every confirm of a reseller needs
// that account's row lock; taken at COMMIT, it is held over the trigger and the commit's WAL flush,
// not over a statement's round trip to our process and back (docs/adr/0016-business-account-row-and-commit.md).
// A savepoint that answers for its own writes (a GraphQL mutation field) settles them at its end
// with SET CONSTRAINTS business_transaction_settles IMMEDIATE (src/db/engine/transaction.ts
// `settleDeferred`).
export class Migration20261127010000_settled_at_commit extends Migration {
  override name = 'Migration20261127010000_settled_at_commit';

  up(): void {
    this.addSql(`
      alter table business_account add constraint business_account_balance_not_negative check (balance >= 0);
      -- null from the row's INSERT until its transaction settles it
      alter table business_transaction alter column balance_after drop not null;

      create function settle_business_transaction() returns trigger language plpgsql as $fn$
      declare
        change bigint := case when new.type = 'DEBIT' then -new.amount else new.amount end;
        moved bigint;
      begin
        update business_account set balance = balance + change
          where reseller_id = new.reseller_id and balance + change >= 0
          returning balance into moved;
        if moved is null then
          -- src/platform/errors.ts answers this constraint's violation as 422 insufficient_balance
          raise exception using errcode = 'check_violation', constraint = 'business_account_balance_not_negative',
            message = format('The business account balance (%s) cannot pay %s',
                             (select balance from business_account where reseller_id = new.reseller_id), new.amount);
        end if;
        update business_transaction set balance_after = moved where id = new.id;
        return null;
      end
      $fn$;

      create constraint trigger business_transaction_settles after insert on business_transaction
        deferrable initially deferred for each row execute function settle_business_transaction();
    `);
  }
}
