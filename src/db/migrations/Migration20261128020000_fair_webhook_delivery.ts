import { Migration } from '@mikro-orm/migrations';

// Fair webhook delivery (README "Webhooks"): due attempts are claimed per endpoint in turn. The
// claim looks up each endpoint's due and leased deliveries by this index, and takes endpoints in
// the order they were last served (`last_claimed_at`, never served first).
export class Migration20261128020000_fair_webhook_delivery extends Migration {
  override name = 'Migration20261128020000_fair_webhook_delivery';

  up(): void {
    this.addSql(`
      alter table webhook_endpoint add column last_claimed_at timestamptz;
      create index webhook_delivery_endpoint_due_idx on webhook_delivery (endpoint_id, next_attempt_at, id) where status = 'PENDING';
    `);
  }

  override down(): void {
    this.addSql('drop index webhook_delivery_endpoint_due_idx; alter table webhook_endpoint drop column last_claimed_at;');
  }
}
