import { Migration } from '@mikro-orm/migrations';

// How many providers each (category, tier) has. A pass covers every provider of the (category,
// tier) pairs it lists, so the pass lists' provider counts (GET /passes, GraphQL providerCount) sum
// these few rows instead of counting the provider table on every request: at 100,000 providers
// that count grew with the catalogue (docs/adr/0012-cheaper-request-edges-provider-tier-jit-off.md). Triggers on provider keep
// the table right for every way a provider is written (the catalogue import's upserts, seeds, SQL
// by hand), once per statement, from its transition tables.
export class Migration20261127000000_provider_tiers extends Migration {
  override name = 'Migration20261127000000_provider_tiers';

  up(): void {
    this.addSql(`
      create table provider_tier (
        category text not null,
        tier text not null,
        providers int not null,
        primary key (category, tier)
      );
      insert into provider_tier (category, tier, providers) select category, tier, count(*) from provider group by category, tier;

      -- Each pair moves by its net change: +1 for a row written into it, -1 for a row that left
      -- it. A pair with a net loss had rows, so its row exists and the conflict adds the change.
      create function provider_tier_count() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          delete from provider_tier;
        elsif tg_op = 'INSERT' then
          insert into provider_tier as pt (category, tier, providers)
          select category, tier, count(*) from inserted group by category, tier
          on conflict (category, tier) do update set providers = pt.providers + excluded.providers;
        elsif tg_op = 'DELETE' then
          insert into provider_tier as pt (category, tier, providers)
          select category, tier, -count(*) from removed group by category, tier
          on conflict (category, tier) do update set providers = pt.providers + excluded.providers;
        else
          insert into provider_tier as pt (category, tier, providers)
          select category, tier, sum(delta) from (
            select category, tier, 1 as delta from inserted
            union all
            select category, tier, -1 as delta from removed
          ) moved group by category, tier having sum(delta) <> 0
          on conflict (category, tier) do update set providers = pt.providers + excluded.providers;
        end if;
        return null;
      end
      $$;
      create trigger provider_tier_insert after insert on provider
        referencing new table as inserted for each statement execute function provider_tier_count();
      create trigger provider_tier_update after update on provider
        referencing old table as removed new table as inserted for each statement execute function provider_tier_count();
      create trigger provider_tier_delete after delete on provider
        referencing old table as removed for each statement execute function provider_tier_count();
      create trigger provider_tier_truncate after truncate on provider
        for each statement execute function provider_tier_count();
    `);
  }
}
