import { Migration } from '@mikro-orm/migrations';

// Bookings: co-pay and extra-visit sessions, bookings with their status history, the visit
// entitlements a confirm buys, the visit ledger that the pass counters and entitlements sum from,
// and provider API keys (the provider side moves bookings on). docs/partner-guide.md "Bookings" states the rules.
export class Migration20261124000000_bookings extends Migration {
  override name = 'Migration20261124000000_bookings';

  up(): void {
    this.addSql(`
      -- A booking waiting for a purchase: a spa co-pay, a class co-pay package or extra visits.
      create table booking_session (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        issued_pass_id text not null references issued_pass (id),
        provider_id text not null references provider (id),
        kind text not null check (kind in ('SPA_COPAY', 'CLASS_COPAY', 'CLASS_EXTRA_VISITS')),
        type text not null check (type in ('spa', 'class')),
        class_instance_id text references class_instance (id),
        service_ids jsonb not null default '[]',
        service_name text not null,
        provider_name text not null,
        local_date date not null,
        local_time char(5) not null,
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        currency char(3) not null,
        copay_amount bigint check (copay_amount >= 0),
        copay_credits bigint check (copay_credits >= 0),
        copay_option_ids jsonb not null default '[]',
        cost_per_visit bigint check (cost_per_visit >= 0),
        visits_used int,
        max_visits int,
        status text not null check (status in ('OPEN', 'CONFIRMED', 'EXPIRED')),
        booking_id text,
        expires_at timestamptz not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index booking_session_client_idx on booking_session (client_id, id desc);
      create index booking_session_open_idx on booking_session (expires_at) where status = 'OPEN';

      -- Visits bought on top of the pass: extra visits (any covered provider of the category) or a
      -- co-pay package (one provider whose tier the pass does not cover), each for a window.
      create table visit_entitlement (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        issued_pass_id text not null references issued_pass (id),
        kind text not null check (kind in ('EXTRA_VISITS', 'COPAY')),
        category text not null check (category in ('GYM', 'SPA')),
        provider_id text references provider (id),
        copay_option_id text references copay_option (id),
        visits_total int not null check (visits_total >= 1),
        visits_used int not null default 0 check (visits_used >= 0 and visits_used <= visits_total),
        amount_paid bigint not null check (amount_paid >= 0),
        currency char(3) not null,
        valid_from timestamptz not null,
        valid_until timestamptz not null,
        session_id text references booking_session (id),
        created_at timestamptz not null
      );
      create index visit_entitlement_client_idx on visit_entitlement (client_id, valid_until);

      create table booking (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        issued_pass_id text not null references issued_pass (id),
        provider_id text not null references provider (id),
        type text not null check (type in ('spa', 'class')),
        status text not null check (status in ('PENDING', 'CONFIRMED', 'CANCELLED', 'COMPLETED', 'RESCHEDULED')),
        class_instance_id text references class_instance (id),
        service_ids jsonb not null default '[]',
        service_name text not null,
        provider_name text not null,
        local_date date not null,
        local_time char(5) not null,
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        -- what paid for it: the pass (visit or credits), a co-pay, or bought extra visits
        payment text not null check (payment in ('PASS', 'COPAY', 'EXTRA_VISITS')),
        visits_deducted int not null default 0 check (visits_deducted >= 0),
        -- where the deducted visit came from: null = the pass's monthly counter, else an entitlement
        visit_entitlement_id text references visit_entitlement (id),
        visit_period char(7),
        credits_charged bigint not null default 0 check (credits_charged >= 0),
        copay_amount bigint check (copay_amount >= 0),
        currency char(3) not null,
        session_id text references booking_session (id),
        rescheduled_from text references booking (id),
        rescheduled_to text references booking (id),
        refund jsonb,
        -- [{status, at}] oldest first; appended under the row lock with each change
        history jsonb not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      -- A session books once; a client holds one live booking per class instance.
      create unique index booking_one_per_session on booking (session_id) where session_id is not null;
      create unique index booking_one_per_instance_client on booking (class_instance_id, client_id)
        where class_instance_id is not null and status in ('PENDING', 'CONFIRMED');
      create index booking_client_idx on booking (client_id, id desc);
      create index booking_provider_idx on booking (provider_id, id desc);
      -- the spa slot check and availability read live spa appointments by time
      create index booking_spa_live_idx on booking (provider_id, starts_at)
        where type = 'spa' and status in ('PENDING', 'CONFIRMED');

      -- The visit ledger: one row per change of a pass's monthly counter or an entitlement's use,
      -- in the same transaction; counters and visits_used always equal its sums.
      create table visit_transaction (
        id text primary key,
        reseller_id text not null references reseller (id),
        client_id text not null references client (id),
        issued_pass_id text not null references issued_pass (id),
        visit_entitlement_id text references visit_entitlement (id),
        category text not null check (category in ('GYM', 'SPA')),
        -- the pass counter's month (YYYY-MM); null for an entitlement
        period char(7),
        delta int not null check (delta <> 0),
        reason text not null check (reason in ('BOOKING', 'CANCELLATION', 'RENEWAL', 'ACCESS_CODE')),
        booking_id text,
        created_at timestamptz not null
      );
      create index visit_transaction_pass_idx on visit_transaction (issued_pass_id, id);

      create table provider_api_key (
        id text primary key,
        provider_id text not null references provider (id),
        secret_hash char(64) not null unique,
        last4 char(4) not null,
        label text,
        created_at timestamptz not null,
        revoked_at timestamptz
      );
      create index provider_api_key_provider_idx on provider_api_key (provider_id);
    `);
  }

  override down(): void {
    this.addSql('drop table provider_api_key, visit_transaction, visit_entitlement, booking, booking_session cascade;');
  }
}
