import type { EntityName } from '@mikro-orm/core';
import { plainRows, preparedRead, type Plain } from '../db/engine/index.ts';
import { notFound } from '../platform/errors.ts';
import type { IdKind } from '../platform/ids.ts';
import { pageArgsFromConnection, toConnection, type ConnectionArgs, type Page, type PageArgs } from '../platform/pagination.ts';
import { clientSessionOf, resellerOf } from '../platform/request-context.ts';
import { registerNodeType } from './builder.ts';
import type { GraphQLContext } from './context.ts';
import { nullWhenNotFound, runQuery } from './use-case.ts';

// How the GraphQL surface batches reads (docs/architecture.md "Layout"); a new module copies these.
//
// A node type: `builder.loadableNode(ref, { load: rowsById(Entity, 'reseller' | 'catalogue'), … })`,
// then `registerNode(kind, Ref)` so node(id:)/nodes(ids:) reach it (`{ clientSession: true }` when a
// client-session token may read the type: its client's rows or the catalogue), and a single-object query
// (`client(id:)`) answers `nodeOrNull(Ref, ctx, id)`: one loader, one scope, one null rule.
//
// A child connection (Provider.classes, Class.instances …): a loadable field with byPath, so every
// parent at one place of the query shares its arguments and an alias with other arguments gets its
// own batch; `load` pages all parents in one statement (src/platform/pages-per-parent.ts):
//   classes: t.loadable({ type: ClassConnection, byPath: true, args: { ...t.arg.connectionArgs() },
//     complexity: connectionCost, load: childConnections((ctx, ids, page) => classesOfProviders(ctx, ids, page)),
//     resolve: (provider) => provider.id }),

/** Who may see a row: only the caller's reseller ('reseller', by `resellerId`), or any reseller ('catalogue', shared rows). */
export type Tenancy = 'reseller' | 'catalogue';

type Load<T> = (ids: readonly string[], ctx: GraphQLContext) => Promise<(T | Error)[]>;

/**
 * The `load` of a node type: rows of `entity` by id in one statement, in the order asked; an id
 * this caller cannot see (another reseller's, or none) is a not-found error, never another's row.
 * Catalogue rows are shared, but still read only by a caller acting for a reseller. The rows are
 * plain objects (src/db/engine/plain-rows.ts): a query only reads them, and a managed entity per
 * row was most of a nested read's time (docs/adr/0031-graphql-reads-as-plain-rows.md).
 */
export function rowsById<T extends { id: string; resellerId: string }>(entity: EntityName<T>, tenancy: 'reseller'): Load<T>;
export function rowsById<T extends { id: string }>(
  entity: EntityName<T>,
  tenancy: 'catalogue',
  options?: { keptByProcess?: boolean },
): Load<T>;
export function rowsById<T extends { id: string }>(entity: EntityName<T>, tenancy: Tenancy, { keptByProcess = false } = {}): Load<T> {
  let table: string | undefined;
  let sql: string | undefined;
  return async (ids, ctx) => {
    const { resellerId } = resellerOf(ctx);
    table ??= ctx.em.getMetadata().get(entity).tableName;
    // `keptByProcess`: a catalogue table only its import writes, kept until a change is notified
    // (src/platform/catalogue-cache.ts); only the rows not kept are read.
    const shelf = keptByProcess ? ctx.catalogue?.shelf<Plain<T>>(table) : undefined;
    const kept = shelf ? ids.flatMap((id) => shelf.get(id) ?? []) : [];
    const wanted = kept.length > 0 ? ids.filter((id) => shelf!.get(id) === undefined) : ids;
    // One text per entity (a prepared statement), the ids as one array parameter; on the primary (a replica may lag a notification).
    sql ??= `select * from ${table} where id = any(?)${tenancy === 'reseller' ? ' and reseller_id = ?' : ''}`;
    const found =
      wanted.length === 0
        ? []
        : await preparedRead<Record<string, unknown>>(ctx.em, sql, tenancy === 'reseller' ? [[...wanted], resellerId] : [[...wanted]]);
    const read = plainRows(ctx.em, entity, found);
    shelf?.keep(read);
    const rows = kept.length > 0 ? [...kept, ...read] : read;
    // A client-session token sees a reseller's row that belongs to a client (a booking, an issued
    // pass) only when it is its own client's (docs/partner-guide.md "Client sessions"); others are not found.
    const session = clientSessionOf(ctx);
    const visible = session && tenancy === 'reseller' ? rows.filter((r) => !('clientId' in r) || r.clientId === session.clientId) : rows;
    return inRequestedOrder(ids, visible);
  };
}

/** Batch results in the order asked; an id missing from `rows` is a not-found error. */
export function inRequestedOrder<T extends { id: string }>(ids: readonly string[], rows: T[]): (T | Error)[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? notFound('object', id));
}

/** A node type's ref as builder.loadableNode returns it. */
interface NodeRef<T> {
  name: string;
  getDataloader(ctx: GraphQLContext): { load(id: string): Promise<T> };
}

/**
 * node(id:) and nodes(ids:) resolve ids of this kind (their prefix) through the type's own loader.
 * `clientSession`: a client-session token may read this type by node/nodes too (its own client's
 * rows, which the loader keeps to, or the catalogue); left out, the type is null to a token.
 */
export function registerNode(kind: IdKind, ref: NodeRef<unknown>, { clientSession = false } = {}): void {
  registerNodeType(kind, ref.name, (ctx, id) => ref.getDataloader(ctx).load(id), { clientSession });
}

/** A single-object query by id answers as node(id:) does: null for an id this caller cannot see. */
export function nodeOrNull<T>(ref: NodeRef<T>, ctx: GraphQLContext, id: string): Promise<T | null> {
  return ref.getDataloader(ctx).load(id).catch(nullWhenNotFound);
}

/** Pages of children keyed by parent id; an Error (a cursor of another parent's list) fails that parent's connection only. */
export type PagesOf<T> = (ctx: GraphQLContext, parentIds: readonly string[], page: PageArgs) => Promise<Map<string, Page<T> | Error>>;

/**
 * The `load` of a child connection (byPath, so `args` are the same for every parent of a batch):
 * the connection arguments checked once, one `pagesOf` call for all parents, a connection each.
 */
export function childConnections<T extends { id: string }, Args extends ConnectionArgs>(
  pagesOf: (ctx: GraphQLContext, parentIds: readonly string[], page: PageArgs, args: Args) => ReturnType<PagesOf<T>>,
) {
  return (parentIds: readonly string[], ctx: GraphQLContext, args: Args) =>
    runQuery(async () => {
      const page = pageArgsFromConnection(args);
      const pages = await pagesOf(ctx, parentIds, page, args);
      return parentIds.map((id) => {
        const result = pages.get(id) ?? notFound('object', id);
        return result instanceof Error ? result : toConnection(result, page);
      });
    });
}

/** What a child connection costs: a page of its nodes. */
export const connectionCost = (args: ConnectionArgs) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 });
