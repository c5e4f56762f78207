import { describe, expect, it } from 'vitest';
import { onDatabaseMigratedTo } from '../support/migrations.ts';

// Migration20261127000000_provider_tiers counts the providers of each (category, tier) into
// provider_tier, which the pass lists' provider counts read: on a database that already holds a
// catalogue, it must start from the providers there, and the triggers take it on from there.
describe('the provider_tier migration on an existing database', () => {
  it('counts the providers already there per (category, tier), and later writes move the counts', async () => {
    await onDatabaseMigratedTo('Migration20261125000000_business_account', async ({ sql, up }) => {
      const id = (n: string) => `prov_01J${n.padStart(23, '0')}`;
      const provider = (n: string, category: string, tier: string) =>
        `('${id(n)}', 'P', '${category}', '${tier}', 'a', 'c', 'DE', 52.5, 13.4, 'Europe/Berlin', '{}', now())`;
      await sql(`insert into provider (id, name, category, tier, address, city, country, lat, lon, timezone, opening_hours, created_at) values
        ${[provider('0A', 'GYM', 'GOLD'), provider('0B', 'GYM', 'GOLD'), provider('0C', 'GYM', 'SILVER'), provider('0D', 'SPA', 'GOLD')].join(', ')}`);

      expect(await up('Migration20261127000000_provider_tiers')).toEqual(['Migration20261127000000_provider_tiers']);
      const tiers = () => sql('select category, tier, providers from provider_tier where providers <> 0 order by category, tier');
      expect(await tiers()).toEqual([
        { category: 'GYM', tier: 'GOLD', providers: 2 },
        { category: 'GYM', tier: 'SILVER', providers: 1 },
        { category: 'SPA', tier: 'GOLD', providers: 1 },
      ]);
      await sql(`update provider set tier = 'SILVER' where id = '${id('0A')}'`);
      await sql(
        `insert into provider (id, name, category, tier, address, city, country, lat, lon, timezone, opening_hours, created_at) values ${provider('0E', 'SPA', 'BRONZE')}`,
      );
      await sql(`delete from provider where id = '${id('0D')}'`);
      expect(await tiers()).toEqual([
        { category: 'GYM', tier: 'GOLD', providers: 1 },
        { category: 'GYM', tier: 'SILVER', providers: 2 },
        { category: 'SPA', tier: 'BRONZE', providers: 1 },
      ]);
    });
  });
});
