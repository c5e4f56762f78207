import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityName, FilterQuery } from '@mikro-orm/core';
import { z } from 'zod';
import { DomainError, validationError } from './errors.ts';
import { isId, type IdKind } from './ids.ts';
import { parseInput } from './validation.ts';
import type { ConnectionType } from '../db/engine/index.ts';

// One keyset paginator for REST lists and Relay connections. Ids are time-ordered, so
// newest first is `id DESC`; a cursor is an id of the list; one extra row tells `has_more`.

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 10;

export interface PageArgs {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
  /** Page backward even without a cursor: Relay `last` alone takes the end of the list. */
  backward?: boolean;
  /**
   * The request argument the cursor came from, named in its `invalid_cursor` error: REST
   * `starting_after`/`ending_before` (the default), GraphQL `after`/`before`.
   */
  cursorParam?: string;
}

export interface Page<T> {
  data: T[];
  /** More items exist beyond this page in the direction of paging. */
  hasMore: boolean;
  direction: 'forward' | 'backward';
}

const limitSchema = z
  .string()
  .regex(/^\d+$/, 'limit must be an integer between 1 and 100')
  .transform(Number)
  .refine((n) => n >= 1 && n <= MAX_LIMIT, 'limit must be an integer between 1 and 100')
  // The form OpenAPI documents (src/rest/openapi.ts): a client sends a number, parsed here from its string.
  .meta({ openapi: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Items a page' } });

export const pageQuerySchema = z.object({
  limit: limitSchema.optional(),
  starting_after: z.string().min(1).max(64).optional().describe('An id of this list: the page holds the items after it'),
  ending_before: z.string().min(1).max(64).optional().describe('An id of this list: the page holds the items before it'),
});

/** REST: `limit`, `starting_after`, `ending_before` from the query string. */
export function pageArgsFromQuery(query: Record<string, string | undefined>): PageArgs {
  const q = parseInput(pageQuerySchema, {
    limit: query.limit,
    starting_after: query.starting_after,
    ending_before: query.ending_before,
  });
  if (q.starting_after !== undefined && q.ending_before !== undefined) {
    throw validationError('ending_before', 'Send either starting_after or ending_before, not both');
  }
  return {
    limit: q.limit ?? DEFAULT_LIMIT,
    startingAfter: q.starting_after,
    endingBefore: q.ending_before,
    cursorParam: q.ending_before !== undefined ? 'ending_before' : 'starting_after',
  };
}

/** 400 `invalid_cursor` naming the argument the cursor was sent in, on either surface. */
export function invalidCursor(args: PageArgs, cursor: string): DomainError {
  const param = args.cursorParam ?? (args.endingBefore !== undefined ? 'ending_before' : 'starting_after');
  return new DomainError('invalid_cursor', `'${cursor}' is not an id of this list`, { param });
}

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** Relay: `first/after` pages forward (like starting_after), `last/before` backward. */
export function pageArgsFromConnection(args: ConnectionArgs): PageArgs {
  const { first, after, last, before } = args;
  if (first != null && last != null) throw validationError('last', 'Send either first or last, not both');
  if (after != null && before != null) throw validationError('before', 'Send either after or before, not both');
  // Mixed directions have no single keyset meaning: page forward with first/after, backward with last/before.
  if (first != null && before != null) throw validationError('before', 'Page backward with last and before, forward with first and after');
  if (last != null && after != null) throw validationError('after', 'Page backward with last and before, forward with first and after');
  const limit = first ?? last ?? DEFAULT_LIMIT;
  const param = last != null ? 'last' : 'first';
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw validationError(param, `${param} must be an integer between 1 and 100`);
  }
  const backward = last != null || (before != null && first == null);
  if (backward) return { limit, endingBefore: before ?? undefined, backward: true, cursorParam: 'before' };
  return { limit, startingAfter: after ?? undefined, cursorParam: 'after' };
}

/**
 * Pages `entity` rows matching `where` (which must already carry the tenancy scope).
 * A cursor that is not an id of this very list is 400 `invalid_cursor`.
 */
export async function keysetPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  args: PageArgs,
  kind: IdKind,
  // 'read' for a lag-tolerant list read outside a transaction (lagTolerant, src/db/engine/replicas.ts).
  connectionType: ConnectionType = 'write',
): Promise<Page<T>> {
  const cursor = args.startingAfter ?? args.endingBefore;
  const backward = args.endingBefore !== undefined || args.backward === true;
  if (cursor !== undefined) {
    const invalid = invalidCursor(args, cursor);
    if (!isId(kind, cursor)) throw invalid;
    const found = await em.count(entity, { $and: [where, { id: cursor }] } as FilterQuery<T>, { connectionType });
    if (found === 0) throw invalid;
  }
  const bound = cursor === undefined ? {} : { id: backward ? { $gt: cursor } : { $lt: cursor } };
  const rows = await em.find(entity, { $and: [where, bound] } as FilterQuery<T>, {
    orderBy: { id: backward ? 'asc' : 'desc' } as never,
    limit: args.limit + 1,
    connectionType,
  });
  const hasMore = rows.length > args.limit;
  const data = rows.slice(0, args.limit);
  if (backward) data.reverse();
  return { data, hasMore, direction: backward ? 'backward' : 'forward' };
}

/** The Relay shape of a page; cursors are the same ids the REST list uses. */
export function toConnection<T extends { id: string }, N = T>(
  page: Page<T>,
  args: PageArgs,
  present: (row: T) => N = (r) => r as unknown as N,
) {
  const edges = page.data.map((row) => ({ cursor: row.id, node: present(row) }));
  const forward = page.direction === 'forward';
  return {
    edges,
    pageInfo: {
      hasNextPage: forward ? page.hasMore : args.endingBefore !== undefined,
      hasPreviousPage: forward ? args.startingAfter !== undefined : page.hasMore,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

/**
 * Keyset paging for hot reads in plain SQL (a list page in one statement): the bound on `<alias>.id`,
 * the order and the limit (one extra row tells `has_more`), plus a `cursor_ok` expression that
 * checks the cursor names a row of the same list (`scope`, a WHERE over the same table) in the same
 * statement. Pair with pageFromRows.
 */
export function keysetSql(args: PageArgs, kind: IdKind, table: string, scope: { sql: string; params: unknown[] }) {
  const cursor = args.startingAfter ?? args.endingBefore;
  const backward = args.endingBefore !== undefined || args.backward === true;
  if (cursor !== undefined && !isId(kind, cursor)) throw invalidCursor(args, cursor);
  return {
    bound: cursor === undefined ? { sql: 'true', params: [] } : { sql: `id ${backward ? '>' : '<'} ?`, params: [cursor] },
    order: backward ? 'asc' : 'desc',
    limit: args.limit + 1,
    cursorOk:
      cursor === undefined
        ? { sql: 'true', params: [] }
        : { sql: `exists (select 1 from ${table} where id = ? and ${scope.sql})`, params: [cursor, ...scope.params] },
    cursor,
    backward,
  } as const;
}

/**
 * The page of `rows` fetched with keysetSql; each row carries `cursor_ok`. With no row back, the
 * cursor still has to be told apart from the end of the list: `cursorExists` asks (error path only).
 */
export async function pageFromRows<T>(
  rows: (T & { cursor_ok: boolean })[],
  args: PageArgs,
  sql: ReturnType<typeof keysetSql>,
  cursorExists: () => Promise<boolean>,
): Promise<Page<T>> {
  if (sql.cursor !== undefined) {
    const ok = rows.length > 0 ? rows[0].cursor_ok : await cursorExists();
    if (!ok) throw invalidCursor(args, sql.cursor);
  }
  const data = rows.slice(0, args.limit);
  if (sql.backward) data.reverse();
  return { data, hasMore: rows.length > args.limit, direction: sql.backward ? 'backward' : 'forward' };
}
