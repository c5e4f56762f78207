import { Migration } from '@mikro-orm/migrations';

// The catalogue: providers (gyms and spas) with their co-pay options, spa services, class
// categories, classes and class instances. Shared by all resellers (a reseller's passes decide
// which of it they cover). Proximity uses earthdistance's cube points with a GiST index.
export class Migration20261122010000_catalogue extends Migration {
  override name = 'Migration20261122010000_catalogue';

  up(): void {
    this.addSql(`
      create extension if not exists cube;
      create extension if not exists earthdistance;

      create table provider (
        id text primary key,
        name text not null,
        category text not null check (category in ('GYM', 'SPA')),
        tier text not null,
        description text not null default '',
        address text not null,
        city text not null,
        country char(2) not null,
        lat double precision not null check (lat between -90 and 90),
        lon double precision not null check (lon between -180 and 180),
        timezone text not null,
        free_cancellation_hours int not null default 24 check (free_cancellation_hours >= 0),
        late_cancellation_refund_percent int not null default 0 check (late_cancellation_refund_percent between 0 and 100),
        -- {"mon": [{"open": "06:00", "close": "22:00"}], …}: local wall-clock hours per ISO weekday
        opening_hours jsonb not null,
        -- spa rooms: how many appointments can run at the same time
        room_capacity int not null default 1 check (room_capacity >= 1),
        created_at timestamptz not null
      );
      -- KNN and radius searches: ORDER BY ll_to_earth(lat, lon) <-> point, earth_box(point, r) @> …
      create index provider_earth_idx on provider using gist (ll_to_earth(lat, lon));
      create index provider_category_tier_idx on provider (category, tier, id desc);

      create table copay_option (
        id text primary key,
        provider_id text not null references provider (id),
        name text not null,
        currency char(3) not null,
        tiers jsonb not null,
        max_visits int not null check (max_visits >= 1),
        visit_duration_days int not null check (visit_duration_days >= 1),
        client_copay_amount bigint not null check (client_copay_amount >= 0),
        client_copay_credits bigint not null check (client_copay_credits >= 0),
        created_at timestamptz not null
      );
      create index copay_option_provider_idx on copay_option (provider_id, id desc);

      create table spa_service (
        id text primary key,
        provider_id text not null references provider (id),
        name text not null,
        duration_minutes int not null check (duration_minutes between 15 and 480 and duration_minutes % 15 = 0),
        credits bigint not null check (credits >= 0),
        copay_amount bigint check (copay_amount >= 0),
        currency char(3) not null,
        created_at timestamptz not null
      );
      create index spa_service_provider_idx on spa_service (provider_id, id desc);

      create table class_category (
        id text primary key,
        name text not null unique,
        description text not null default '',
        active boolean not null default true,
        created_at timestamptz not null
      );

      create table class (
        id text primary key,
        provider_id text not null references provider (id),
        category_id text not null references class_category (id),
        name text not null,
        description text not null default '',
        duration_minutes int not null check (duration_minutes between 5 and 480),
        created_at timestamptz not null
      );
      create index class_provider_idx on class (provider_id, id desc);
      create index class_category_idx on class (category_id, id desc);

      create table class_instance (
        id text primary key,
        class_id text not null references class (id),
        starts_at timestamptz not null,
        -- the start's calendar date in the provider's zone, kept for the date filter
        local_date date not null,
        capacity int not null check (capacity >= 1),
        -- spots held by bookings; changed under a row lock together with the booking
        spots_taken int not null default 0 check (spots_taken >= 0 and spots_taken <= capacity),
        status text not null default 'SCHEDULED' check (status in ('SCHEDULED', 'CANCELLED')),
        created_at timestamptz not null
      );
      create index class_instance_class_idx on class_instance (class_id, starts_at);
      create index class_instance_date_idx on class_instance (local_date, class_id);
    `);
  }

  override down(): void {
    this.addSql('drop table class_instance, class, class_category, spa_service, copay_option, provider cascade;');
  }
}
