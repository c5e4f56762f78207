import { Migration } from '@mikro-orm/migrations';

// The wallet moves by its ledger: inserting a credit_transaction row moves the client's
// credit_balance, in a row trigger that takes the client row's lock, refuses an overdraft and
// fills in the row's balance_after and seq. The INSERT needs nothing back, so a use case queues it
// with its other writes (src/db/engine/prepared-read.ts): a covered spa booking's debit rides in the
// statement that carries its booking, one round trip fewer with the spa's lock held (bench/README.md
// "Bookings"). seq is drawn after the lock, as its column default was, so one client's rows in
// seq order are the order the balance moved (docs/domain-rules.md "Money").
export class Migration20261127020000_wallet_by_ledger extends Migration {
  override name = 'Migration20261127020000_wallet_by_ledger';

  up(): void {
    this.addSql(`
      alter table credit_transaction alter column seq drop default;

      create function move_wallet() returns trigger language plpgsql as $fn$
      declare
        change bigint := case when new.type = 'DEBIT' then -new.amount else new.amount end;
      begin
        update client set credit_balance = credit_balance + change
          where id = new.client_id and reseller_id = new.reseller_id and credit_balance + change >= 0
          returning credit_balance into new.balance_after;
        if not found then
          if not exists (select 1 from client where id = new.client_id and reseller_id = new.reseller_id) then
            raise exception 'no client % of reseller %', new.client_id, new.reseller_id;
          end if;
          -- src/platform/errors.ts answers this constraint's violation as 400 insufficient_credits
          raise exception using errcode = 'check_violation', constraint = 'client_credit_balance_not_negative',
            message = format('The client has %s credits; %s are needed',
                             (select credit_balance from client where id = new.client_id), new.amount);
        end if;
        new.seq := nextval('credit_transaction_seq');
        return new;
      end
      $fn$;

      create trigger credit_transaction_moves_wallet before insert on credit_transaction
        for each row execute function move_wallet();
    `);
  }
}
