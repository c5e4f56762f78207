import { Migration } from '@mikro-orm/migrations';

// Hand-written so the SQL is reviewed as SQL; keep to what PostgreSQL 15 supports (CI runs 15).
export class Migration20261122000000_foundation extends Migration {
  override name = 'Migration20261122000000_foundation';

  up(): void {
    this.addSql(`
      create table reseller (
        id text primary key,
        name text not null,
        currency char(3) not null,
        status text not null check (status in ('ACTIVE', 'DISABLED')),
        lookup_enabled boolean not null default false,
        balance bigint not null default 0,
        created_at timestamptz not null
      );

      create table api_key (
        id text primary key,
        reseller_id text not null references reseller (id),
        secret_hash char(64) not null unique,
        last4 char(4) not null,
        label text,
        created_at timestamptz not null,
        revoked_at timestamptz
      );
      create index api_key_reseller_idx on api_key (reseller_id);

      -- The business account's ledger: append-only, one row per balance change, same transaction.
      create table business_transaction (
        id text primary key,
        reseller_id text not null references reseller (id),
        type text not null check (type in ('CREDIT', 'DEBIT')),
        amount bigint not null check (amount > 0),
        balance_after bigint not null,
        description text not null,
        reference_id text,
        created_at timestamptz not null
      );
      create index business_transaction_reseller_idx on business_transaction (reseller_id, id desc);

      create table pass_package (
        id text primary key,
        reseller_id text not null references reseller (id),
        name text not null,
        description text not null default '',
        price bigint not null check (price >= 0),
        currency char(3) not null,
        duration text not null check (duration in ('MONTHLY', 'QUARTERLY', 'ANNUALLY')),
        payment_model text not null check (payment_model in ('PAYG', 'PREPAID')),
        categories jsonb not null,
        created_at timestamptz not null
      );
      create index pass_package_reseller_idx on pass_package (reseller_id, id desc);

      create table client (
        id text primary key,
        reseller_id text not null references reseller (id),
        first_name text not null,
        last_name text not null,
        email text not null,
        phone text,
        external_id text,
        credit_balance bigint not null default 0 check (credit_balance >= 0),
        created_at timestamptz not null
      );
      create index client_reseller_idx on client (reseller_id, id desc);

      create table issued_pass (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        pass_id text not null references pass_package (id),
        passcode char(8) not null unique,
        status text not null check (status in ('ACTIVE', 'EXPIRED', 'CANCELLED')),
        payment_model text not null check (payment_model in ('PAYG', 'PREPAID')),
        start_date date not null,
        expires_at timestamptz not null,
        visits_period char(7) not null,
        visits_used jsonb not null default '{}',
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      -- At most one non-cancelled issued pass per client: "the client's active issued pass" is unique.
      create unique index issued_pass_one_current_per_client on issued_pass (client_id) where status <> 'CANCELLED';
      create index issued_pass_reseller_idx on issued_pass (reseller_id, id desc);

      -- The client's credit wallet ledger.
      create table credit_transaction (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        type text not null check (type in ('CREDIT', 'DEBIT')),
        amount bigint not null check (amount > 0),
        balance_after bigint not null check (balance_after >= 0),
        description text not null,
        booking_id text,
        created_at timestamptz not null
      );
      create index credit_transaction_client_idx on credit_transaction (client_id, id desc);

      -- Written in the same transaction as the response's effects; the key holds while the row lives.
      create table idempotency_record (
        reseller_id text not null references reseller (id),
        key text not null,
        fingerprint char(64) not null,
        status_code int,
        response_body jsonb,
        created_at timestamptz not null,
        primary key (reseller_id, key)
      );
      create index idempotency_record_created_idx on idempotency_record (created_at);

      -- Side effects (webhooks, mail) leave only through this table, claimed with SKIP LOCKED.
      create table outbox (
        id bigserial primary key,
        topic text not null,
        reseller_id text references reseller (id),
        payload jsonb not null,
        created_at timestamptz not null,
        available_at timestamptz not null,
        attempts int not null default 0,
        last_error text,
        processed_at timestamptz
      );
      create index outbox_pending_idx on outbox (available_at) where processed_at is null;
    `);
  }

  override down(): void {
    this.addSql(`drop table outbox, idempotency_record, credit_transaction, issued_pass, client,
      pass_package, business_transaction, api_key, reseller cascade;`);
  }
}
