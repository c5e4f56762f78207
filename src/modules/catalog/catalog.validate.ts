import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead } from '../../db/engine/index.ts';
import type { z } from 'zod';
import { zonedInstant } from '../../platform/time.ts';
import { catalogSections, sectionNames, type Catalog, type CatalogSection } from './catalog.schema.ts';

// Every record of a catalogue file is checked before anything is written: its own fields (zod),
// duplicates inside the file, and its references (to the file or to rows already stored).

export const MAX_REPORTED_PROBLEMS = 50;

export interface CatalogProblem {
  at: string;
  message: string;
}

/** The file was refused: nothing was written. `problems` holds the first 50 of `total`. */
export class CatalogRejected extends Error {
  readonly problems: CatalogProblem[];
  readonly total: number;
  constructor(problems: CatalogProblem[], total: number) {
    super(`the catalogue has ${total} problem${total === 1 ? '' : 's'}; nothing was written`);
    this.name = 'CatalogRejected';
    this.problems = problems;
    this.total = total;
  }
}

class Problems {
  readonly list: CatalogProblem[] = [];
  total = 0;
  add(at: string, message: string) {
    this.total++;
    if (this.list.length < MAX_REPORTED_PROBLEMS) this.list.push({ at, message });
  }
}

/** A validated catalogue plus what the writer derives from stored rows. */
export interface ValidCatalog extends Catalog {
  /** Per class instance id: the start instant and its local date in the provider's zone. */
  instanceStarts: Map<string, { startsAt: Date; localDate: string }>;
  /** Stored providers whose time zone the file changes (their stored instances' dates move). */
  rezonedProviders: string[];
}

const position = (section: string, index: number, field?: string) => `${section}[${index}]${field ? `.${field}` : ''}`;

function issuePath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
}

function describeIssue(issue: z.core.$ZodIssue): { path: string; message: string } {
  if (issue.code === 'unrecognized_keys') {
    return {
      path: issuePath([...issue.path, issue.keys[0]]),
      message: `Unknown field${issue.keys.length > 1 ? `s ${issue.keys.map((k) => `'${k}'`).join(', ')}` : ''}`,
    };
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) return { path: issuePath(issue.path), message: 'Missing required field' };
  return { path: issuePath(issue.path), message: issue.message };
}

type Loaded<T> = Map<string, T>;

/** Rows by id, loaded in batches; ids travel as one jsonb parameter (no placeholder limit). */
async function loadByIds<T extends { id: string }>(em: EntityManager, select: string, ids: Iterable<string>): Promise<Loaded<T>> {
  const all = [...new Set(ids)];
  const found = new Map<string, T>();
  for (let i = 0; i < all.length; i += 10_000) {
    const rows = await preparedRead<T>(em, select.replace('$IDS', 'select jsonb_array_elements_text(?::jsonb)'), [
      JSON.stringify(all.slice(i, i + 10_000)),
    ]);
    for (const row of rows) found.set(row.id, row);
  }
  return found;
}

export async function validateCatalog(
  em: EntityManager,
  input: unknown,
  onRecord?: (done: number, total: number) => void,
): Promise<ValidCatalog> {
  const problems = new Problems();
  const catalog: Catalog = {
    providers: [],
    copay_options: [],
    spa_services: [],
    class_categories: [],
    classes: [],
    class_instances: [],
    pass_packages: [],
  };
  // Where each valid record sits in the file, to report reference problems at its position.
  const positions = new Map<object, number>();
  // Ids named by any record, valid or not: a reference to a refused record is not reported twice.
  const namedIds = new Set<string>();

  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new CatalogRejected([{ at: '(file)', message: `Expected a JSON object with the sections ${sectionNames.join(', ')}` }], 1);
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key === 'format') {
      if (raw.format !== 1) problems.add('format', 'Expected 1 (the only format version)');
    } else if (!(sectionNames as string[]).includes(key)) {
      problems.add(key, `Unknown section (expected ${sectionNames.join(', ')})`);
    } else if (!Array.isArray(raw[key])) {
      problems.add(key, 'Expected an array of records');
    }
  }
  const total = sectionNames.reduce((n, s) => n + (Array.isArray(raw[s]) ? (raw[s] as unknown[]).length : 0), 0);
  let done = 0;

  for (const section of sectionNames) {
    const records = Array.isArray(raw[section]) ? (raw[section] as unknown[]) : [];
    const schema: z.ZodType = catalogSections[section];
    const firstAt = new Map<string, number>();
    records.forEach((record, index) => {
      const rawId = (record as { id?: unknown } | null)?.id;
      if (typeof rawId === 'string') {
        const earlier = firstAt.get(rawId);
        if (earlier !== undefined)
          problems.add(position(section, index, 'id'), `Duplicate id '${rawId}' (also at ${position(section, earlier)})`);
        else firstAt.set(rawId, index);
        namedIds.add(rawId);
      }
      const parsed = schema.safeParse(record, { reportInput: true });
      if (parsed.success) {
        if (earlierDuplicate(firstAt, rawId, index)) return;
        (catalog[section] as object[]).push(parsed.data as object);
        positions.set(parsed.data as object, index);
      } else {
        for (const issue of parsed.error.issues) {
          const { path, message } = describeIssue(issue);
          problems.add(`${section}[${index}]${path}`, message);
        }
      }
      if (++done % 10_000 === 0) onRecord?.(done, total);
    });
  }
  onRecord?.(total, total);

  const at = (section: CatalogSection, record: object, field?: string) => position(section, positions.get(record) ?? -1, field);
  const result = await checkReferences(em, catalog, at, namedIds, problems);
  if (problems.total > 0) throw new CatalogRejected(problems.list, problems.total);
  return result;
}

function earlierDuplicate(firstAt: Map<string, number>, id: unknown, index: number): boolean {
  return typeof id === 'string' && firstAt.get(id) !== index;
}

type At = (section: CatalogSection, record: object, field?: string) => string;

async function checkReferences(
  em: EntityManager,
  catalog: Catalog,
  at: At,
  namedIds: Set<string>,
  problems: Problems,
): Promise<ValidCatalog> {
  const fileProviders = new Map(catalog.providers.map((p) => [p.id, p]));
  const fileCategories = new Map(catalog.class_categories.map((c) => [c.id, c]));
  const fileClasses = new Map(catalog.classes.map((c) => [c.id, c]));
  const outside = (ids: string[], inFile: Map<string, unknown>) => ids.filter((id) => !inFile.has(id) && !namedIds.has(id));

  const storedProviders = await loadByIds<{ id: string; category: string; timezone: string }>(
    em,
    'select id, category, timezone from provider where id in ($IDS)',
    [
      ...catalog.providers.map((p) => p.id),
      ...outside(
        [...catalog.copay_options, ...catalog.spa_services, ...catalog.classes].map((r) => r.provider_id),
        fileProviders,
      ),
    ],
  );
  const storedCategories = await loadByIds<{ id: string; name: string }>(
    em,
    'select id, name from class_category where id in ($IDS)',
    outside(
      catalog.classes.map((c) => c.category_id),
      fileCategories,
    ),
  );
  const storedClasses = await loadByIds<{ id: string; provider_id: string; timezone: string }>(
    em,
    'select c.id, c.provider_id, p.timezone from class c join provider p on p.id = c.provider_id where c.id in ($IDS)',
    outside(
      catalog.class_instances.map((i) => i.class_id),
      fileClasses,
    ),
  );
  const storedInstances = await loadByIds<{ id: string; spots_taken: number }>(
    em,
    'select id, spots_taken from class_instance where id in ($IDS)',
    catalog.class_instances.map((i) => i.id),
  );
  const resellers = await loadByIds<{ id: string; currency: string }>(
    em,
    'select id, currency from reseller where id in ($IDS)',
    catalog.pass_packages.map((p) => p.reseller_id),
  );
  const storedPasses = await loadByIds<{ id: string; reseller_id: string }>(
    em,
    'select id, reseller_id from pass_package where id in ($IDS)',
    catalog.pass_packages.map((p) => p.id),
  );

  // A reference resolves to a record of the file, a stored row, or a refused record (already reported).
  const providerCategory = (id: string) => fileProviders.get(id)?.category ?? storedProviders.get(id)?.category;
  const checkProvider = (section: CatalogSection, record: { provider_id: string }, category: 'GYM' | 'SPA') => {
    const found = providerCategory(record.provider_id);
    if (found === undefined) {
      if (!namedIds.has(record.provider_id))
        problems.add(at(section, record, 'provider_id'), `Unknown provider '${record.provider_id}' (not in the file nor stored)`);
    } else if (found !== category) {
      problems.add(
        at(section, record, 'provider_id'),
        `Provider '${record.provider_id}' is a ${found}; ${section} belong to a ${category}`,
      );
    }
  };
  for (const o of catalog.copay_options) checkProvider('copay_options', o, 'GYM');
  for (const s of catalog.spa_services) checkProvider('spa_services', s, 'SPA');
  for (const c of catalog.classes) {
    checkProvider('classes', c, 'GYM');
    if (!fileCategories.has(c.category_id) && !storedCategories.has(c.category_id) && !namedIds.has(c.category_id)) {
      problems.add(at('classes', c, 'category_id'), `Unknown class category '${c.category_id}' (not in the file nor stored)`);
    }
  }

  await checkCategoryNames(em, catalog, at, problems);

  const instanceStarts = new Map<string, { startsAt: Date; localDate: string }>();
  for (const i of catalog.class_instances) {
    const cls = fileClasses.get(i.class_id);
    // The zone the file gives the provider wins over the stored one (the file may move it).
    const providerId = cls?.provider_id ?? storedClasses.get(i.class_id)?.provider_id;
    const timezone =
      providerId === undefined
        ? undefined
        : (fileProviders.get(providerId)?.timezone ?? storedProviders.get(providerId)?.timezone ?? storedClasses.get(i.class_id)?.timezone);
    if (!cls && !storedClasses.has(i.class_id)) {
      if (!namedIds.has(i.class_id))
        problems.add(at('class_instances', i, 'class_id'), `Unknown class '${i.class_id}' (not in the file nor stored)`);
      continue;
    }
    if (timezone === undefined) continue; // its provider was refused and is reported there
    const startsAt = zonedInstant(i.date, i.time, timezone);
    if (!startsAt) {
      problems.add(at('class_instances', i, 'time'), `${i.time} does not exist on ${i.date} in ${timezone} (the clocks skip it)`);
      continue;
    }
    instanceStarts.set(i.id, { startsAt, localDate: i.date });
    const taken = storedInstances.get(i.id)?.spots_taken ?? 0;
    if (i.capacity < taken)
      problems.add(at('class_instances', i, 'capacity'), `${taken} spots are already booked; capacity cannot go below that`);
  }

  for (const p of catalog.pass_packages) {
    const reseller = resellers.get(p.reseller_id);
    if (!reseller)
      problems.add(
        at('pass_packages', p, 'reseller_id'),
        `Unknown reseller '${p.reseller_id}' (resellers are created with \`resellers create\`)`,
      );
    else if (reseller.currency.trim() !== p.currency)
      problems.add(at('pass_packages', p, 'currency'), `Must be the reseller's currency (${reseller.currency.trim()})`);
    const stored = storedPasses.get(p.id);
    if (stored && stored.reseller_id !== p.reseller_id)
      problems.add(
        at('pass_packages', p, 'reseller_id'),
        `Pass '${p.id}' belongs to reseller '${stored.reseller_id}'; a pass cannot move to another reseller`,
      );
  }

  const rezonedProviders = catalog.providers
    .filter((p) => {
      const s = storedProviders.get(p.id);
      return s !== undefined && s.timezone !== p.timezone;
    })
    .map((p) => p.id);
  return { ...catalog, instanceStarts, rezonedProviders };
}

/** Class category names are unique: inside the file, and against stored categories of other ids. */
async function checkCategoryNames(em: EntityManager, catalog: Catalog, at: At, problems: Problems): Promise<void> {
  const byName = new Map<string, string>();
  for (const c of catalog.class_categories) {
    const other = byName.get(c.name);
    if (other) problems.add(at('class_categories', c, 'name'), `Another category of the file ('${other}') is named '${c.name}'`);
    else byName.set(c.name, c.id);
  }
  if (byName.size === 0) return;
  const fileIds = new Set(catalog.class_categories.map((c) => c.id));
  const stored = await preparedRead<{ id: string; name: string }>(
    em,
    'select id, name from class_category where name in (select jsonb_array_elements_text(?::jsonb))',
    [JSON.stringify([...byName.keys()])],
  );
  for (const row of stored) {
    const id = byName.get(row.name);
    // A stored category renamed by this very file frees its name.
    if (id && id !== row.id && !fileIds.has(row.id)) {
      const record = catalog.class_categories.find((c) => c.id === id)!;
      problems.add(at('class_categories', record, 'name'), `A stored class category ('${row.id}') is already named '${row.name}'`);
    }
  }
}
