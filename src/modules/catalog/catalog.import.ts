import type { EntityManager } from '@mikro-orm/postgresql';
import { sectionNames, type CatalogSection } from './catalog.schema.ts';
import { validateCatalog, type ValidCatalog } from './catalog.validate.ts';
import { preparedWrite, withTransaction } from '../../db/engine/index.ts';

// `catalog import FILE`: validate every record first, then upsert by id in batches, all in one
// transaction, so a refused or failed import leaves the database exactly as it was.

export const IMPORT_BATCH_SIZE = 2000;

export type ImportStage = 'validate' | CatalogSection;
export type ImportProgress = (stage: ImportStage, done: number, total: number) => void;

/** Per section: rows created, rows changed, and rows the file repeats unchanged. */
export type ImportCounts = Record<CatalogSection, { inserted: number; updated: number; unchanged: number }>;

interface Table {
  name: string;
  /** Column → PostgreSQL type, as read from each row's JSON. */
  columns: Record<string, string>;
}

// Column order and types of each section's table (src/db/migrations/*_catalogue.ts, pass_package).
const tables: Record<CatalogSection, Table> = {
  providers: {
    name: 'provider',
    columns: {
      id: 'text',
      name: 'text',
      category: 'text',
      tier: 'text',
      description: 'text',
      address: 'text',
      city: 'text',
      country: 'text',
      lat: 'float8',
      lon: 'float8',
      timezone: 'text',
      free_cancellation_hours: 'int',
      late_cancellation_refund_percent: 'int',
      opening_hours: 'jsonb',
      room_capacity: 'int',
      created_at: 'timestamptz',
    },
  },
  copay_options: {
    name: 'copay_option',
    columns: {
      id: 'text',
      provider_id: 'text',
      name: 'text',
      currency: 'text',
      tiers: 'jsonb',
      max_visits: 'int',
      visit_duration_days: 'int',
      client_copay_amount: 'int8',
      client_copay_credits: 'int8',
      created_at: 'timestamptz',
    },
  },
  spa_services: {
    name: 'spa_service',
    columns: {
      id: 'text',
      provider_id: 'text',
      name: 'text',
      duration_minutes: 'int',
      credits: 'int8',
      copay_amount: 'int8',
      currency: 'text',
      created_at: 'timestamptz',
    },
  },
  class_categories: {
    name: 'class_category',
    columns: { id: 'text', name: 'text', description: 'text', active: 'boolean', created_at: 'timestamptz' },
  },
  classes: {
    name: 'class',
    columns: {
      id: 'text',
      provider_id: 'text',
      category_id: 'text',
      name: 'text',
      description: 'text',
      duration_minutes: 'int',
      created_at: 'timestamptz',
    },
  },
  class_instances: {
    name: 'class_instance',
    // spots_taken is not imported: bookings own it (it keeps its default, or its stored value).
    columns: {
      id: 'text',
      class_id: 'text',
      starts_at: 'timestamptz',
      local_date: 'date',
      capacity: 'int',
      status: 'text',
      created_at: 'timestamptz',
    },
  },
  pass_packages: {
    name: 'pass_package',
    columns: {
      id: 'text',
      reseller_id: 'text',
      name: 'text',
      description: 'text',
      price: 'int8',
      currency: 'text',
      duration: 'text',
      payment_model: 'text',
      categories: 'jsonb',
      created_at: 'timestamptz',
    },
  },
};

/** Table rows (snake_case, as jsonb_to_recordset reads them) of one section. */
function rowsOf(catalog: ValidCatalog, section: CatalogSection, at: string): Record<string, unknown>[] {
  switch (section) {
    case 'providers':
      return catalog.providers.map(({ opening_hours, cancellation_policy, ...p }) => ({
        ...p,
        opening_hours,
        ...cancellation_policy,
        created_at: at,
      }));
    case 'class_instances':
      return catalog.class_instances.map(({ date: _date, time: _time, ...i }) => {
        const start = catalog.instanceStarts.get(i.id)!;
        return { ...i, starts_at: start.startsAt.toISOString(), local_date: start.localDate, created_at: at };
      });
    default:
      return (catalog[section] as object[]).map((r) => ({ ...r, created_at: at }));
  }
}

/**
 * One multi-row upsert. Rows travel as a single jsonb parameter (no 65,535-placeholder limit);
 * a row equal to the stored one is not rewritten, so re-importing a file changes nothing.
 */
async function upsertBatch(
  em: EntityManager,
  table: Table,
  rows: Record<string, unknown>[],
): Promise<{ inserted: number; updated: number }> {
  const columns = Object.keys(table.columns);
  // created_at stays the first import's time.
  const changing = columns.filter((c) => c !== 'id' && c !== 'created_at');
  const [result] = await preparedWrite<{ inserted: string; updated: string }>(
    em,
    `with written as (
       insert into ${table.name} as t (${columns.join(', ')})
       select ${columns.join(', ')} from jsonb_to_recordset(?::jsonb) as r(${columns.map((c) => `${c} ${table.columns[c]}`).join(', ')})
       on conflict (id) do update set ${changing.map((c) => `${c} = excluded.${c}`).join(', ')}
        where (${changing.map((c) => `t.${c}`).join(', ')}) is distinct from (${changing.map((c) => `excluded.${c}`).join(', ')})
       returning (xmax = 0) as inserted
     )
     select count(*) filter (where inserted) as inserted, count(*) filter (where not inserted) as updated from written`,
    [JSON.stringify(rows)],
  );
  return { inserted: Number(result.inserted), updated: Number(result.updated) };
}

/**
 * Validates `input` (a parsed catalogue file) and writes it in `em`'s transaction, opening one
 * when `em` is not in one. Throws CatalogRejected, before writing anything, when a record is bad.
 */
export async function importCatalog(
  em: EntityManager,
  input: unknown,
  opts: { at: Date; onProgress?: ImportProgress; batchSize?: number },
): Promise<ImportCounts> {
  const batchSize = opts.batchSize ?? IMPORT_BATCH_SIZE;
  return withTransaction(em, async (tx) => {
    const catalog = await validateCatalog(tx, input, (done, total) => opts.onProgress?.('validate', done, total));
    const at = opts.at.toISOString();
    const counts = Object.fromEntries(sectionNames.map((s) => [s, { inserted: 0, updated: 0, unchanged: 0 }])) as ImportCounts;
    for (const section of sectionNames) {
      const rows = rowsOf(catalog, section, at);
      for (let i = 0; i < rows.length; i += batchSize) {
        const batch = rows.slice(i, i + batchSize);
        const written = await upsertBatch(tx, tables[section], batch);
        counts[section].inserted += written.inserted;
        counts[section].updated += written.updated;
        counts[section].unchanged += batch.length - written.inserted - written.updated;
        opts.onProgress?.(section, Math.min(i + batchSize, rows.length), rows.length);
      }
      if (section === 'providers' && catalog.rezonedProviders.length > 0) await redateInstances(tx, catalog.rezonedProviders);
    }
    return counts;
  });
}

/** A provider moved to another zone keeps its instances' instants; their local dates follow the zone. */
async function redateInstances(em: EntityManager, providerIds: string[]): Promise<void> {
  await preparedWrite(
    em,
    `update class_instance i set local_date = (i.starts_at at time zone p.timezone)::date
       from class c join provider p on p.id = c.provider_id
      where c.id = i.class_id and p.id in (select jsonb_array_elements_text(?::jsonb))`,
    [JSON.stringify(providerIds)],
  );
}
