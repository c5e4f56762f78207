import { Migration } from '@mikro-orm/migrations';

// Live booking status (docs/partner-guide.md "Live booking status", docs/adr/0029-live-events-over-sse.md):
// subscriptions read recorded events in the order their transactions became visible, and a NOTIFY
// in the same transaction as the event row wakes every server process when it commits.
//
// - `seq` orders the events of one transaction; `txid` is the transaction that wrote the row. An
//   event is delivered only once every transaction older than its own has ended
//   (`txid < pg_snapshot_xmin(pg_current_snapshot())`), so ordering by (txid, seq) never puts a
//   later-committing event before one already delivered: a cursor is never overtaken. The rows
//   already there take the migration's transaction id, before every later one.
// - `client_id`: the client the event's object belongs to, so a client-session subscriber reads
//   its own client's events only. Null for rows of earlier releases and events without a client.
// - The trigger: the release before this one records events too (it never names these columns),
//   and its events must wake subscribers as well. Its payload stays small (ids only).
export class Migration20261130000400_live_events extends Migration {
  override name = 'Migration20261130000400_live_events';

  up(): void {
    this.addSql(`create sequence event_seq;`);
    this.addSql(`alter table event add column seq bigint not null default nextval('event_seq');`);
    this.addSql(`alter sequence event_seq owned by event.seq;`);
    this.addSql(`alter table event add column txid xid8 not null default pg_current_xact_id();`);
    this.addSql(`alter table event add column client_id text;`);
    this.addSql(`create index event_position_idx on event (txid, seq);`);
    this.addSql(`create index event_reseller_position_idx on event (reseller_id, txid, seq);`);
    this.addSql(`
      create function event_recorded_notify() returns trigger language plpgsql
        set search_path from current as $$
      begin
        perform pg_notify('event_recorded', json_build_object('id', new.id, 'reseller_id', new.reseller_id, 'client_id', new.client_id)::text);
        return null;
      end $$;`);
    this.addSql(`
      create trigger event_recorded_notify after insert on event
        for each row execute function event_recorded_notify();`);
  }
}
