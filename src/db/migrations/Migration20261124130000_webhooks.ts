import { Migration } from '@mikro-orm/migrations';

// Webhooks (docs/partner-guide.md "Webhooks"): the events a reseller can list and receive, its endpoints, and one
// delivery row per event and endpoint that the delivery worker claims with a lease.
export class Migration20261124130000_webhooks extends Migration {
  override name = 'Migration20261124130000_webhooks';

  up(): void {
    this.addSql(`
      -- Every recorded event (README "Events"), written by recordEvent in the statement that writes
      -- its outbox row. \`payload\` is json, not jsonb: its text is the exact body webhooks POST and sign.
      create table event (
        id text primary key,
        reseller_id text not null references reseller (id),
        type text not null,
        payload json not null,
        created_at timestamptz not null
      );
      create index event_reseller_idx on event (reseller_id, id desc);
      create index event_reseller_type_idx on event (reseller_id, type, id desc);

      -- The events recorded before this table existed are still in the outbox: list them too.
      insert into event (id, reseller_id, type, payload, created_at)
      select payload->>'id', reseller_id, payload->>'type', payload::json, created_at
        from outbox
       where topic = 'event' and reseller_id is not null and payload->>'id' is not null
      on conflict (id) do nothing;

      create table webhook_endpoint (
        id text primary key,
        reseller_id text not null references reseller (id),
        url text not null,
        -- catalogue types, or ["*"] for every type
        enabled_events jsonb not null check (jsonb_typeof(enabled_events) = 'array' and jsonb_array_length(enabled_events) > 0),
        status text not null check (status in ('ENABLED', 'DISABLED')),
        description text,
        -- sealed (README "Secrets at rest"): the whsec_ secret signs, so it cannot be a hash
        secret text not null,
        -- the secret before the last rotation, which signs too until previous_secret_expires_at
        previous_secret text,
        previous_secret_expires_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check ((previous_secret is null) = (previous_secret_expires_at is null))
      );
      create index webhook_endpoint_reseller_idx on webhook_endpoint (reseller_id, id desc);
      create index webhook_endpoint_enabled_idx on webhook_endpoint (reseller_id) where status = 'ENABLED';

      create table webhook_delivery (
        id text primary key,
        reseller_id text not null references reseller (id),
        endpoint_id text not null references webhook_endpoint (id) on delete cascade,
        event_id text not null references event (id),
        event_type text not null,
        status text not null check (status in ('PENDING', 'SUCCEEDED', 'FAILED')),
        -- attempts started (counted when claimed, so one cut off by a crash counts too)
        attempts int not null default 0 check (attempts >= 0),
        next_attempt_at timestamptz,
        -- the lease of the worker sending it: nobody else claims it before then
        locked_until timestamptz,
        last_response_status int,
        last_error text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (endpoint_id, event_id),
        check ((status = 'PENDING') = (next_attempt_at is not null))
      );
      create index webhook_delivery_due_idx on webhook_delivery (next_attempt_at) where status = 'PENDING';
      create index webhook_delivery_endpoint_idx on webhook_delivery (endpoint_id, id desc);
      create index webhook_delivery_event_idx on webhook_delivery (event_id);
    `);
  }

  override down(): void {
    this.addSql('drop table webhook_delivery, webhook_endpoint, event;');
  }
}
