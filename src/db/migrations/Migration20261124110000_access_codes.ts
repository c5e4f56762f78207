import { Migration } from '@mikro-orm/migrations';

// Access codes (docs/partner-guide.md "Access codes"): single-use codes for one visit, kept as their SHA-256 only,
// and their sessions (a co-pay or extra visits to buy first); the visit ledger names the code a
// visit was taken for, and gives a visit back when a code expires unredeemed; and the database's
// own QR signing key, used only while ACCESS_CODE_SIGNING_KEY is unset.
export class Migration20261124110000_access_codes extends Migration {
  override name = 'Migration20261124110000_access_codes';

  up(): void {
    this.addSql(`
      -- An access code waiting for a purchase: a co-pay option at its provider, or extra visits. Its
      -- own table rather than booking_session: the bookings module maps and sweeps that one as its
      -- BookingSession (README "Access codes"). A code for any covered gym has no provider.
      create table access_code_session (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        issued_pass_id text not null references issued_pass (id),
        provider_id text references provider (id),
        kind text not null check (kind in ('COPAY', 'EXTRA_VISITS')),
        currency char(3) not null,
        copay_option_ids jsonb not null default '[]',
        cost_per_visit bigint check (cost_per_visit >= 0),
        visits_used int,
        max_visits int,
        status text not null check (status in ('OPEN', 'CONFIRMED', 'EXPIRED')),
        expires_at timestamptz not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check (provider_id is not null or kind = 'EXTRA_VISITS')
      );
      create index access_code_session_open_idx on access_code_session (expires_at) where status = 'OPEN';

      create table access_code (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        issued_pass_id text not null references issued_pass (id),
        -- the provider it is valid at; null: any provider of \`category\` the pass covers
        provider_id text references provider (id),
        category text not null check (category in ('GYM', 'SPA')),
        -- SHA-256 (hex) of the 8-character code; the code itself is never stored
        code_hash char(64) not null unique,
        status text not null check (status in ('ACTIVE', 'REDEEMED', 'EXPIRED')),
        -- the visit it holds: from the pass counter of this month (YYYY-MM), or from an entitlement
        visit_period char(7),
        visit_entitlement_id text references visit_entitlement (id),
        -- the session whose confirm bought it (and the entitlement it holds a visit of)
        session_id text unique references access_code_session (id),
        expires_at timestamptz not null,
        redeemed_at timestamptz,
        redeemed_provider_id text references provider (id),
        -- set when it expired: whether its visit went back (only to this month's counter, or an entitlement)
        visit_restored boolean,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check ((visit_period is null) <> (visit_entitlement_id is null)),
        check ((status = 'REDEEMED') = (redeemed_at is not null and redeemed_provider_id is not null)),
        check ((status = 'EXPIRED') = (visit_restored is not null))
      );
      create index access_code_active_idx on access_code (expires_at) where status = 'ACTIVE';
      create index access_code_client_idx on access_code (client_id, id desc);

      -- The visit ledger names the access code a visit was taken for (or given back from). The code
      -- is inserted after its visit is taken, in the same transaction: the reference is checked at commit.
      alter table visit_transaction add column access_code_id text
        references access_code (id) deferrable initially deferred;
      alter table visit_transaction drop constraint visit_transaction_reason_check;
      alter table visit_transaction add constraint visit_transaction_reason_check
        check (reason in ('BOOKING', 'CANCELLATION', 'RENEWAL', 'ACCESS_CODE', 'ACCESS_CODE_EXPIRED'));

      -- One row: the key QR payloads are signed with while ACCESS_CODE_SIGNING_KEY is unset.
      create table access_code_signing_key (
        id boolean primary key default true check (id),
        key text not null,
        created_at timestamptz not null
      );
    `);
  }

  override down(): void {
    this.addSql(`
      drop table access_code_signing_key;
      -- The ledger keeps its rows (its sums are the counters): a visit given back is a cancellation to the old code.
      update visit_transaction set reason = 'CANCELLATION' where reason = 'ACCESS_CODE_EXPIRED';
      alter table visit_transaction drop constraint visit_transaction_reason_check;
      alter table visit_transaction add constraint visit_transaction_reason_check
        check (reason in ('BOOKING', 'CANCELLATION', 'RENEWAL', 'ACCESS_CODE'));
      alter table visit_transaction drop column access_code_id;
      drop table access_code, access_code_session;
    `);
  }
}
