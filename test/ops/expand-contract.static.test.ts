import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrationsList } from '../../src/db/migrations/index.ts';
import { destructiveStatements, expandContractProblems, GRANDFATHERED, upStatements } from '../support/expand-contract.ts';
import { repoRoot } from './processes.ts';

// Migrations are expand/contract (docs/architecture.md "Migrations"): the previous release runs on
// the new schema, so a migration after the baseline that drops, renames or narrows anything must be
// a declared contract step (src/db/migrations/contract.ts).

const folder = path.join(repoRoot, 'src/db/migrations');
const files = fs.readdirSync(folder).filter((f) => /^Migration\d{14}_\w+\.ts$/.test(f));

describe('the migrations in src/db/migrations', () => {
  it('are each listed to run, and each follows the expand/contract rule', async () => {
    expect(files.map((f) => f.replace(/\.ts$/, '')).sort()).toEqual(migrationsList.map((m) => m.name).sort());
    const problems: string[] = [];
    for (const file of files) {
      const name = file.replace(/\.ts$/, '');
      const module = (await import(path.join(folder, file))) as Record<string, unknown>;
      const cls = module[name] as { prototype: { up(): unknown } };
      problems.push(...expandContractProblems({ name, sql: upStatements(cls), contract: module.contract }));
    }
    expect(problems).toEqual([]);
  });

  it('grandfather only migrations written before the rule, all of them still listed', () => {
    const names = migrationsList.map((m) => m.name);
    for (const name of GRANDFATHERED) {
      expect(names).toContain(name);
      expect(name <= 'Migration20261129000000_provider_earth_point', name).toBe(true);
    }
  });

  it('would have refused grandfathered ones that changed what an earlier release used', () => {
    const accountMigration = migrationsList.find((m) => m.name === 'Migration20261125000000_business_account')!;
    expect(destructiveStatements(upStatements(accountMigration.class).join(';'))).not.toEqual([]);
  });
});

describe('the rule on sample migrations', () => {
  const expand = (name: string, sql: string, contract?: unknown) =>
    expandContractProblems({ name: `Migration20991231000000_${name}`, sql: [sql], contract });

  it.each([
    ['drop table', 'drop table legacy_thing'],
    ['drop column', 'alter table reseller drop column name'],
    ['drop column without COLUMN', 'alter table reseller drop if exists name'],
    ['rename column', 'alter table reseller rename column name to display_name'],
    ['rename table', 'alter table reseller rename to partner'],
    ['column type', 'alter table reseller alter column name type varchar(40)'],
    ['set data type', 'alter table reseller alter column name set data type text'],
    ['column type without COLUMN', 'alter table only reseller alter name type text using name::text'],
    ['set not null', 'alter table reseller alter column name set not null'],
    ['NOT NULL column without default', 'alter table reseller add column region text not null'],
    [
      'NOT NULL column without default, second action',
      'alter table reseller add column a int default 1, add column b numeric(10, 2) not null',
    ],
    ['drop constraint', 'alter table api_key drop constraint api_key_hash_key'],
    ['drop index', 'drop index if exists provider_geo_idx'],
    ['drop default', 'alter table reseller alter column status drop default'],
    ['truncate', 'truncate idempotency_record'],
  ])('an expand migration with %s is refused', (_what, sql) => {
    const problems = expand('bad', `create table other (id text primary key);\n${sql};`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^Migration20991231000000_bad .*\(an expand migration; declare a contract step to remove\)$/);
  });

  it('an expand migration that only adds passes: tables, nullable or defaulted columns, indexes, a relaxed NOT NULL', () => {
    const sql = `
      -- drop table nothing: a comment says what it likes
      create table region (id text primary key, name text not null);
      alter table reseller add column region_id text references region (id), add column tier text not null default 'BASIC';
      alter table reseller add column seq bigint generated always as identity;
      create index concurrently reseller_region_idx on reseller (region_id);
      alter table reseller alter column name drop not null;
      comment on column reseller.tier is 'we will rename this one day';
    `;
    expect(expand('good', sql)).toEqual([]);
  });

  it('a declared contract step may remove what it names; a wrong or empty declaration is refused', () => {
    const sql = 'alter table reseller drop column legacy_name; drop index reseller_legacy_idx';
    expect(
      expand('contract', sql, { removes: ['reseller.legacy_name', 'reseller_legacy_idx'], unusedSince: 'Migration20991230000000_x' }),
    ).toEqual([]);
    expect(expand('contract', sql, { removes: ['reseller.nickname'], unusedSince: 'Migration20991230000000_x' })).toEqual([
      'Migration20991231000000_contract: contract.removes names reseller.nickname, which its SQL does not touch',
    ]);
    expect(expand('contract', sql, { removes: [], unusedSince: '' })).toHaveLength(2);
    expect(expand('contract', 'create table x (id int)', { removes: ['x'], unusedSince: 'y' })).toEqual([
      'Migration20991231000000_contract: declares a contract step but removes nothing',
    ]);
  });
});
