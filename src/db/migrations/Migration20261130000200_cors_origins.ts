import { Migration } from '@mikro-orm/migrations';

// Each reseller's CORS allow-list for /graphql (docs/partner-guide.md "Calling from a browser"): exact
// origins, lower-cased, at most 20 per reseller (the service checks the format and the count). A new
// table only: the previous release never reads it.
export class Migration20261130000200_cors_origins extends Migration {
  override name = 'Migration20261130000200_cors_origins';

  up(): void {
    this.addSql(`
      create table reseller_cors_origin (
        reseller_id text not null references reseller (id),
        origin text not null check (origin = lower(origin) and length(origin) <= 200),
        created_at timestamptz not null,
        primary key (reseller_id, origin)
      );
    `);
  }
}
