import { Migration } from '@mikro-orm/migrations';

// Every change to the provider table, whatever makes it (the catalogue import, an operator's SQL),
// NOTIFYs `catalogue_changed` with the table's name: each process keeps the providers it has read
// until then (src/platform/catalogue-cache.ts). Once per statement, in the writing transaction, so
// it arrives at COMMIT and never for a rolled-back change; PostgreSQL folds a transaction's equal
// notifications into one, so an import of thousands of rows sends one.
export class Migration20261130000600_catalogue_changed extends Migration {
  override name = 'Migration20261130000600_catalogue_changed';

  up(): void {
    this.addSql(`
      create function catalogue_changed_notify() returns trigger language plpgsql
        set search_path from current as $$
      begin
        perform pg_notify('catalogue_changed', tg_table_name);
        return null;
      end $$;`);
    this.addSql(`
      create trigger catalogue_changed_notify after insert or update or delete or truncate on provider
        for each statement execute function catalogue_changed_notify();`);
  }
}
