import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRead, type ConnectionType } from '../db/engine/index.ts';
import type { DomainError } from './errors.ts';
import { invalidCursor, type Page, type PageArgs } from './pagination.ts';

// One page of children for each of many parents in ONE statement (Provider.classes, .services and
// .copayOptions for a page of providers, Class.instances for a page of classes): row_number() over
// (partition by parent) keeps the first limit+1 rows of every parent, so no parent costs a query.

export interface PerParentQuery {
  /** Table with alias, e.g. `class_instance ci`. */
  table: string;
  alias: string;
  parentColumn: string;
  /** A sort column before the id tie-break (e.g. `starts_at`); ordering by id alone when absent. */
  sortColumn?: string;
  /** Forward order: newest first (`id desc`) or soonest first (`starts_at asc, id asc`). */
  descending: boolean;
  /** Extra conditions on the alias, joined with AND, and their `?` parameters in order. */
  where: string[];
  params: unknown[];
}

type Row = Record<string, unknown> & { id: string };

/**
 * Pages of `parentIds`' children, keyed by parent id. A cursor (after/before) must be a child of
 * the parent it pages; for any other parent that connection answers 400 `invalid_cursor`.
 */
export async function pagesPerParent(
  em: EntityManager,
  q: PerParentQuery,
  parentIds: readonly string[],
  page: PageArgs,
  // 'read' for a lag-tolerant read outside a transaction (lagTolerant, src/db/engine/replicas.ts).
  connectionType: ConnectionType = 'write',
): Promise<Map<string, Page<Row> | DomainError>> {
  const result = new Map<string, Page<Row> | DomainError>();
  if (parentIds.length === 0) return result;
  const a = q.alias;
  const backward = page.endingBefore !== undefined || page.backward === true;
  // Backward pages read the list from its end, then are reversed into list order.
  const ascending = q.descending === backward;
  const dir = ascending ? 'asc' : 'desc';
  const key = q.sortColumn ? `(${a}.${q.sortColumn}, ${a}.id)` : `${a}.id`;
  const order = q.sortColumn ? `${a}.${q.sortColumn} ${dir}, ${a}.id ${dir}` : `${a}.id ${dir}`;

  const cursor = page.startingAfter ?? page.endingBefore;
  let keyset = '';
  let keysetParams: unknown[] = [];
  let cursorParent: string | undefined;
  if (cursor !== undefined) {
    const [row] = await preparedRead<Record<string, unknown>>(
      em,
      `select ${a}.${q.parentColumn} as parent${q.sortColumn ? `, ${a}.${q.sortColumn} as sort` : ''} from ${q.table} where ${a}.id = ?`,
      [cursor],
      { connectionType },
    );
    cursorParent = row?.parent as string | undefined;
    keyset = q.sortColumn ? `${key} ${ascending ? '>' : '<'} (?, ?)` : `${key} ${ascending ? '>' : '<'} ?`;
    keysetParams = q.sortColumn ? [row?.sort, cursor] : [cursor];
  }
  const parents = cursor === undefined ? [...parentIds] : parentIds.filter((id) => id === cursorParent);
  for (const id of parentIds) {
    if (cursor !== undefined && !parents.includes(id)) result.set(id, invalidCursor(page, cursor));
  }
  if (parents.length === 0) return result;

  // The parents as one array parameter: one text whatever their number (each text is a prepared statement, src/db/engine/README.md).
  const conditions = [`${a}.${q.parentColumn} = any(?)`, ...q.where, ...(keyset ? [keyset] : [])];
  const rows = await preparedRead<Row & { parent_rank: number }>(
    em,
    `select * from (
       select ${a}.*, row_number() over (partition by ${a}.${q.parentColumn} order by ${order}) as parent_rank
         from ${q.table}
        where ${conditions.join(' and ')}
     ) ranked
     where ranked.parent_rank <= ?
     order by ranked.${q.parentColumn}, ranked.parent_rank`,
    [parents, ...q.params, ...keysetParams, page.limit + 1],
    { connectionType },
  );
  const byParent = new Map<string, Row[]>(parents.map((id) => [id, []]));
  for (const { parent_rank: _rank, ...row } of rows) byParent.get(row[q.parentColumn] as string)?.push(row as Row);
  for (const [id, children] of byParent) {
    const data = children.slice(0, page.limit);
    if (backward) data.reverse();
    result.set(id, { data, hasMore: children.length > page.limit, direction: backward ? 'backward' : 'forward' });
  }
  return result;
}

/** The same pages with each row mapped (raw rows to entities); errors stay as they are. */
export function mapPages<R, T>(pages: Map<string, Page<R> | DomainError>, map: (row: R) => T): Map<string, Page<T> | DomainError> {
  return new Map([...pages].map(([id, p]) => [id, p instanceof Error ? p : { ...p, data: p.data.map(map) }]));
}
