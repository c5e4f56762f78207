import { Migration } from '@mikro-orm/migrations';

// A reseller's own rate limit (docs/operator-guide.md "Rate limits"), set by the operator (`resellers limits`);
// null is the configured default (RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST). Both or neither.
export class Migration20261128010000_rate_limits extends Migration {
  override name = 'Migration20261128010000_rate_limits';

  up(): void {
    this.addSql(`
      alter table reseller
        add column rate_limit_per_second int check (rate_limit_per_second > 0),
        add column rate_limit_burst int check (rate_limit_burst > 0),
        add constraint reseller_rate_limit_both check ((rate_limit_per_second is null) = (rate_limit_burst is null));
    `);
  }
}
