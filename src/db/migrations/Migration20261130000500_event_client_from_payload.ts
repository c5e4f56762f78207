import { Migration } from '@mikro-orm/migrations';

// An event recorded without `client_id` gets it from its payload, by the rule the service applies
// when it records one (src/modules/events/events.service.ts: the object's `client_id`, a string).
// During a rolling upgrade the release before live events still records events and never names the
// column: without this, a client-session subscriber (docs/partner-guide.md "Live booking status")
// would miss its own client's events written by the older instances. Before the insert, so the
// row and its NOTIFY (the live-events trigger, after the insert) both carry it.
export class Migration20261130000500_event_client_from_payload extends Migration {
  override name = 'Migration20261130000500_event_client_from_payload';

  up(): void {
    this.addSql(`
      create function event_client_from_payload() returns trigger language plpgsql
        set search_path from current as $$
      begin
        if new.client_id is null and json_typeof(new.payload->'data'->'object'->'client_id') = 'string' then
          new.client_id := new.payload->'data'->'object'->>'client_id';
        end if;
        return new;
      end $$;`);
    this.addSql(`
      create trigger event_client_from_payload before insert on event
        for each row execute function event_client_from_payload();`);
  }
}
