import { describe, expect, it } from 'vitest';
import { onDatabaseMigratedTo } from '../support/migrations.ts';

// Migration20261129000000_provider_earth_point stores each provider's point on the earth's cube in
// a column (src/platform/geo.ts reads it): the providers already there get theirs, and a row the
// previous release writes (which never names the column) gets it from the trigger, on insert and
// when it moves.
describe('the provider earth_point migration on an existing database', () => {
  it('gives the providers already there their point, and the trigger keeps it with lat/lon', async () => {
    await onDatabaseMigratedTo('Migration20261128020000_fair_webhook_delivery', async ({ sql, up }) => {
      const id = (n: string) => `prov_01J${n.padStart(23, '0')}`;
      const provider = (n: string, lat: number, lon: number) =>
        `('${id(n)}', 'P', 'GYM', 'GOLD', 'a', 'c', 'DE', ${lat}, ${lon}, 'Europe/Berlin', '{}', now())`;
      const columns = 'id, name, category, tier, address, city, country, lat, lon, timezone, opening_hours, created_at';
      await sql(`insert into provider (${columns}) values ${provider('0A', 52.52, 13.405)}, ${provider('0B', 48.137, 11.575)}`);

      expect(await up('Migration20261129000000_provider_earth_point')).toEqual(['Migration20261129000000_provider_earth_point']);
      // The stored point is the one ll_to_earth computes, for the rows before and after the migration.
      const off = () =>
        sql(`select id, round(earth_distance(earth_point, ll_to_earth(lat, lon))::numeric, 3)::float8 as off_m from provider order by id`);
      expect(await off()).toEqual([
        { id: id('0A'), off_m: 0 },
        { id: id('0B'), off_m: 0 },
      ]);
      await sql(`insert into provider (${columns}) values ${provider('0C', 50.11, 8.68)}`);
      await sql(`update provider set lat = 53.55, lon = 9.99 where id = '${id('0A')}'`);
      expect(await off()).toEqual([
        { id: id('0A'), off_m: 0 },
        { id: id('0B'), off_m: 0 },
        { id: id('0C'), off_m: 0 },
      ]);
      // Hamburg's point now, not Berlin's: the update moved it.
      const [hamburg] = await sql(
        `select round(earth_distance(earth_point, ll_to_earth(53.55, 9.99))::numeric)::float8 as m from provider where id = '${id('0A')}'`,
      );
      expect(hamburg).toEqual({ m: 0 });
      expect(await sql(`select indexname from pg_indexes where tablename = 'provider' and indexname like 'provider_earth%'`)).toEqual([
        { indexname: 'provider_earth_point_idx' },
      ]);
    });
  });
});
