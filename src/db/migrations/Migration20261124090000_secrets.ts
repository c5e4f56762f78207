import { Migration } from '@mikro-orm/migrations';

// The database's own master key for sealing secrets at rest, used only while SECRETS_KEY is unset
// (docs/operator-guide.md "Secrets at rest"). One row per name; written once, never updated.
export class Migration20261124090000_secrets extends Migration {
  override name = 'Migration20261124090000_secrets';

  up(): void {
    this.addSql(`
      create table instance_secret (
        name text primary key,
        value text not null
      );
    `);
  }

  override down(): void {
    this.addSql('drop table instance_secret;');
  }
}
