import { Migration } from '@mikro-orm/migrations';

// A provider's point on earthdistance's cube, kept in a column instead of an index on the
// expression ll_to_earth(lat, lon). On PostgreSQL before 17, earthdistance's ll_to_earth names the
// type `earth` without its schema, and pg_restore builds indexes with an empty search_path: the
// expression index made every restore of a dump fail (docs/operator-guide.md "Backups"). A column
// index restores as data. The trigger fills the column on every insert and on every change of
// lat/lon, whichever release writes the row (the release before this one never names the column);
// it runs with the search_path of this migration, so the function resolves wherever it runs.
// Proximity reads the stored point instead of computing it per row.
//
// The old index goes in the same step: its only reader was proximity search, and the release
// before this one still finds the same providers without it, only through a slower plan.
export class Migration20261129000000_provider_earth_point extends Migration {
  override name = 'Migration20261129000000_provider_earth_point';

  up(): void {
    this.addSql(`alter table provider add column earth_point earth;`);
    this.addSql(`
      create function provider_earth_point() returns trigger language plpgsql
        set search_path from current as $$
      begin
        new.earth_point := ll_to_earth(new.lat, new.lon);
        return new;
      end $$;`);
    this.addSql(`
      create trigger provider_earth_point before insert or update of lat, lon on provider
        for each row execute function provider_earth_point();`);
    this.addSql(`update provider set earth_point = ll_to_earth(lat, lon);`);
    this.addSql(`alter table provider alter column earth_point set not null;`);
    this.addSql(`create index provider_earth_point_idx on provider using gist (earth_point);`);
    this.addSql(`drop index provider_earth_idx;`);
  }
}
