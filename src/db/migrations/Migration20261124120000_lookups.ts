import { Migration } from '@mikro-orm/migrations';

// Lookups and the mail they send (docs/partner-guide.md "Lookup", "E-mail"). A lookup keeps its 6-digit code and
// its token only as hashes; a mail message keeps its body sealed, and only until it is delivered.
export class Migration20261124120000_lookups extends Migration {
  override name = 'Migration20261124120000_lookups';

  up(): void {
    this.addSql(`
      -- A reseller (reseller_id) asking an issuer (issuer_id) to let it act for one of its clients.
      create table lookup (
        id text primary key,
        reseller_id text not null references reseller (id),
        issuer_id text not null references reseller (id),
        client_id text not null references client (id),
        -- the client's issued pass when the lookup started; the token lives while it is ACTIVE
        issued_pass_id text not null references issued_pass (id),
        -- EXPIRED is read from expires_at, never stored
        status text not null check (status in ('PENDING', 'ACTIVE', 'FAILED')),
        -- scrypt of the mailed code with a salt of its own (scrypt$<salt>$<hash>, base64url)
        code_hash text not null,
        attempts_remaining int not null check (attempts_remaining between 0 and 5),
        expires_at timestamptz not null,
        -- SHA-256 of the lookup token, set when verified
        token_hash char(64) unique,
        verified_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      -- the rate limit counts a client's lookups of the last hour; active lookups grant reads
      create index lookup_client_created_idx on lookup (client_id, created_at);
      create index lookup_active_idx on lookup (reseller_id, client_id) where status = 'ACTIVE';
      create index lookup_reseller_idx on lookup (reseller_id, id desc);

      -- Mail waiting for the outbox (topic mail): one row per message, delivered at most once.
      create table mail_message (
        id bigserial primary key,
        reseller_id text references reseller (id),
        to_address text not null,
        subject text not null,
        -- {text, html} sealed (README "Secrets at rest"); null once delivered or dropped
        sealed_body text,
        status text not null check (status in ('QUEUED', 'SENT', 'LOGGED', 'EXPIRED')),
        -- the Message-ID it was sent with: one per outbox row, the same on every attempt
        message_id text,
        -- undelivered by then, it is dropped (a lookup code that no longer works)
        expires_at timestamptz,
        created_at timestamptz not null,
        delivered_at timestamptz
      );
    `);
  }

  override down(): void {
    this.addSql('drop table mail_message, lookup cascade;');
  }
}
