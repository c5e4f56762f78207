import { Migration } from '@mikro-orm/migrations';

// Fair webhook delivery (docs/partner-guide.md "Webhooks"): due attempts are claimed per endpoint in turn. The
// claim looks up each endpoint's due deliveries and its leased ones (few: an outcome clears the
// lease) by these indexes, and takes endpoints in the order they were last served
// (`last_claimed_at`, never served first).
export class Migration20261128020000_fair_webhook_delivery extends Migration {
  override name = 'Migration20261128020000_fair_webhook_delivery';

  up(): void {
    this.addSql(`
      alter table webhook_endpoint add column last_claimed_at timestamptz;
      create index webhook_delivery_endpoint_due_idx on webhook_delivery (endpoint_id, next_attempt_at, id) where status = 'PENDING';
      create index webhook_delivery_leased_idx on webhook_delivery (endpoint_id, locked_until) where status = 'PENDING' and locked_until is not null;
    `);
  }

  override down(): void {
    this.addSql(
      'drop index webhook_delivery_endpoint_due_idx, webhook_delivery_leased_idx; alter table webhook_endpoint drop column last_claimed_at;',
    );
  }
}
