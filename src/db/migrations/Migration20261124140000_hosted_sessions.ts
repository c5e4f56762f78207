import { Migration } from '@mikro-orm/migrations';

// Hosted sessions (docs/partner-guide.md "Hosted sessions"): a page of this service where one client books or
// gets an access code for its reseller. The URL's secret is kept only as its SHA-256.
export class Migration20261124140000_hosted_sessions extends Migration {
  override name = 'Migration20261124140000_hosted_sessions';

  up(): void {
    this.addSql(`
      create table hosted_session (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        mode text not null check (mode in ('booking', 'access_code')),
        return_url text not null,
        allow_copay boolean not null,
        -- minor units of the reseller's currency; null: any co-pay (when allow_copay)
        max_copay_amount int check (max_copay_amount >= 0),
        secret_hash char(64) not null unique,
        status text not null check (status in ('OPEN', 'COMPLETED', 'EXPIRED')),
        expires_at timestamptz not null,
        completed_at timestamptz,
        booking_id text references booking (id),
        access_code_id text references access_code (id),
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      -- the sweep finds OPEN sessions past their time
      create index hosted_session_open_idx on hosted_session (expires_at) where status = 'OPEN';
    `);
  }

  override down(): void {
    this.addSql('drop table hosted_session;');
  }
}
