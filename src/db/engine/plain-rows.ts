import type { EntityName, EntityProperty } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { queueWrite } from './prepared-read.ts';
import type { TxEm } from './transaction.ts';

// Rows nothing writes (the catalogue's: providers, classes and their instances, spa services,
// co-pay options; pass packages) as plain objects of their entity's shape, with the values em.map
// would give them, but not merged into the entity manager: em.map builds a managed entity with a
// snapshot, and each flush of the transaction then scans it for changes. On the booking path that
// was a fifth of the server's JavaScript time (docs/adr/0014-plain-rows-and-no-unit-of-work.md). A row that is written
// stays a managed entity, unless it is written by SQL of its own: the booking path's new rows
// (insertPlain) and its counters, which no flush then has to find.

declare const plainBrand: unique symbol;

/**
 * A row read by SQL as a plain object of an entity's shape: not managed, so a change to it would
 * never be flushed. Readonly, so such a change does not compile; branded, so a signature can ask
 * for one (or, taking the entity type, tell a reader it wants a managed one).
 */
export type Plain<T> = Readonly<T> & { readonly [plainBrand]?: true };

type Convert = (value: unknown) => unknown;
interface Column {
  property: string;
  column: string;
  convert: Convert | undefined;
  json: boolean;
}
/** By the entity as named (its schema object, for the process's life): no metadata lookup per row. */
const columnsByEntity = new Map<unknown, Column[]>();

/** `select *` rows of `entity`'s table as plain objects of its properties (not managed); other columns are left out. */
export function plainRows<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  rows: readonly Record<string, unknown>[],
): Plain<T>[] {
  const columns = columnsOf(em, entity);
  return rows.map((row) => {
    const plain: Record<string, unknown> = {};
    for (const { property, column, convert } of columns) {
      const value = row[column];
      plain[property] = value === null || value === undefined || !convert ? value : convert(value);
    }
    return plain as Plain<T>;
  });
}

/** One row as plainRows reads it. */
export function plainRow<T extends object>(em: EntityManager, entity: EntityName<T>, row: Record<string, unknown>): Plain<T> {
  return plainRows(em, entity, [row])[0]!;
}

/**
 * The select list reading `entity`'s columns from `alias` as `"<alias>.<column>"`: a statement that
 * joins one table's rows to another's `select *` columns keeps the two apart by it (one round trip
 * instead of two on the booking path), and plainJoined reads them back.
 */
export function joinedColumns<T extends object>(em: EntityManager, entity: EntityName<T>, alias: string): string {
  return joinedOf(em, entity, alias).selectList;
}

/** The `joinedColumns` of each row as plainRows reads them; rows where the join found none (a null `id`) are left out. */
export function plainJoined<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  alias: string,
  rows: readonly Record<string, unknown>[],
): Plain<T>[] {
  return plainRows(
    em,
    entity,
    rows.flatMap((row) => {
      const own = joinedRow(em, entity, alias, row);
      return own ? [own] : [];
    }),
  );
}

/** The `joinedColumns` of one row under their own column names, as `pg` gave them; undefined when the join found none (a null `id`). */
function joinedRow<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  alias: string,
  row: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const { idKey, keys } = joinedOf(em, entity, alias);
  const id = row[idKey];
  if (id === null || id === undefined) return undefined;
  const own: Record<string, unknown> = {};
  for (const [column, key] of keys) own[column] = row[key];
  return own;
}

/** An entity's joined columns under one alias: the select list and each column's `"<alias>.<column>"` key, built once (a booking reads three such joins). */
interface Joined {
  selectList: string;
  idKey: string;
  keys: [column: string, key: string][];
}
/** By the entity (its schema object, which names one entity for the process's life), then the alias: no key text to build per row. */
const joinedByEntity = new Map<unknown, Map<string, Joined>>();

function joinedOf<T extends object>(em: EntityManager, entity: EntityName<T>, alias: string): Joined {
  let byAlias = joinedByEntity.get(entity);
  if (!byAlias) joinedByEntity.set(entity, (byAlias = new Map()));
  let joined = byAlias.get(alias);
  if (!joined) {
    const keys = columnsOf(em, entity).map(({ column }): [string, string] => [column, `${alias}.${column}`]);
    joined = { selectList: keys.map(([column, key]) => `${alias}.${column} as "${key}"`).join(', '), idKey: `${alias}.id`, keys };
    byAlias.set(alias, joined);
  }
  return joined;
}

/**
 * Inserts `row` (every property of `entity`, as its plain object holds them) with one prepared
 * INSERT in the caller's transaction, queued to go with its next statement (queueWrite), and
 * returns it as it is: a plain object, never managed. For rows a hot path creates and then only
 * reads (a booking, a session): em.create and flush would build a managed entity and its change
 * set for one INSERT, and a round trip of its own.
 */
export async function insertPlain<T extends object>(em: TxEm, entity: EntityName<T>, row: T): Promise<Plain<T>> {
  const meta = em.getMetadata().get(entity);
  const columns = columnsOf(em, entity);
  let sql = insertsByEntity.get(meta.className);
  if (!sql) {
    sql = `insert into ${meta.tableName} (${columns.map((c) => c.column).join(', ')}) values (${columns.map(() => '?').join(', ')})`;
    insertsByEntity.set(meta.className, sql);
  }
  const values = columns.map(({ property, json }) => {
    const value = (row as Record<string, unknown>)[property];
    if (value === undefined) throw new Error(`insertPlain: ${meta.className}.${property} is not set`);
    // pg would send an array as a PostgreSQL array: a json column takes its JSON text.
    return json && value !== null ? JSON.stringify(value) : value;
  });
  await queueWrite(em, sql, values);
  return row;
}
const insertsByEntity = new Map<string, string>();

function columnsOf<T extends object>(em: EntityManager, entity: EntityName<T>): Column[] {
  let columns = columnsByEntity.get(entity);
  if (!columns) {
    const meta = em.getMetadata().get(entity);
    columns = meta.props.map((prop) => ({
      property: prop.name,
      column: columnOf(meta.className, prop),
      convert: converterOf(meta.className, prop),
      json: prop.type === 'JsonType',
    }));
    columnsByEntity.set(entity, columns);
  }
  return columns;
}

function columnOf(entity: string, prop: EntityProperty): string {
  const [column, ...more] = prop.fieldNames;
  if (prop.kind !== 'scalar' || column === undefined || more.length > 0)
    throw new Error(`plainRows: ${entity}.${prop.name} is not a one-column scalar`);
  return column;
}

/**
 * From what `pg` gives (with MikroORM's type parsers) to the entity's value. Types not listed are
 * refused when first met, so a new column type cannot be read wrong silently.
 */
function converterOf(entity: string, prop: EntityProperty): Convert | undefined {
  switch (prop.type) {
    // Already the JS value: text, bool, int4, float8, jsonb (parsed by pg), and date, which MikroORM keeps as 'YYYY-MM-DD'.
    case 'string':
    case 'text':
    case 'boolean':
    case 'integer':
    case 'DoubleType':
    case 'JsonType':
    case 'DateType':
      return undefined;
    // timestamptz arrives as text (MikroORM's parsers keep it so); the entities hold a Date.
    case 'Date':
      return (value) => new Date(value as string);
    // int8 arrives as text; `p.bigint('number')` holds a number.
    case 'BigIntType':
      if (prop.runtimeType === 'number') return Number;
      break;
  }
  throw new Error(`plainRows: no conversion for ${entity}.${prop.name} (${prop.type}, ${prop.runtimeType})`);
}
