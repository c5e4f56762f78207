import { Migration } from '@mikro-orm/migrations';

// Client sessions (docs/partner-guide.md "Client sessions"): a short-lived token a reseller's server
// hands its frontend, acting for one client within its scopes on /graphql. The token is kept only
// as its SHA-256. A new table: the release before this one never reads it.
export class Migration20261130000100_client_sessions extends Migration {
  override name = 'Migration20261130000100_client_sessions';

  up(): void {
    this.addSql(`
      create table client_session (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        token_hash char(64) not null unique,
        -- read, and any of book and access_code
        scopes jsonb not null check (scopes <@ '["read", "book", "access_code"]'::jsonb and scopes ? 'read'),
        expires_at timestamptz not null,
        revoked_at timestamptz,
        created_at timestamptz not null
      );
    `);
  }

  override down(): void {
    this.addSql('drop table client_session;');
  }
}
