import { getArgumentValues, isObjectType, Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { DomainError } from '../platform/errors.ts';
import { pageArgsFromConnection, type ConnectionArgs, type Page, type PageArgs } from '../platform/pagination.ts';
import type { GraphQLContext } from './context.ts';

// A child connection's first page read in its parent's own statement, when a query field asks for
// the parent by id and, in its selection, for that connection (`client(id:) { bookings(first:) }`):
// one statement and one round trip fewer than the parent's loader followed by the connection's
// (docs/adr/0033-connection-pages-read-with-their-parent.md). The page is handed to the
// connection's loader for that parent and those arguments; anything else (a cursor, a page
// backward, the connection asked twice with other arguments, under a directive, arguments the
// service refuses) is left to the loaders as before, which answer it as they always did.

/** A parent type's connection that can be read with the parent. */
export interface ReadAlong<Parent, Args extends ConnectionArgs> {
  /** The connection field on the parent type. */
  field: string;
  /** The parent (undefined when the caller may not read it) and the connection's first page, in one statement. */
  read(ctx: GraphQLContext, parentId: string, page: PageArgs, args: Args): Promise<{ parent: Parent | undefined; page: Page<unknown> }>;
}

/** A node type's ref as builder.loadableNode returns it: its per-request loader, primed with the parent read along. */
interface ParentRef<T> {
  name: string;
  getDataloader(ctx: GraphQLContext): { prime(id: string, value: T): unknown };
}

const byParentType = new Map<string, ReadAlong<unknown, ConnectionArgs>>();
/** Pages read along, per request, until the connection's loader takes them. */
const pagesByRequest = new WeakMap<GraphQLContext, Map<string, Page<unknown>>>();

export function registerReadAlong<Parent, Args extends ConnectionArgs>(ref: ParentRef<Parent>, along: ReadAlong<Parent, Args>): void {
  byParentType.set(ref.name, along as unknown as ReadAlong<unknown, ConnectionArgs>);
}

/**
 * Before a query field loads its parent `id` through `ref`'s loader: reads the parent with the
 * first page of its registered connection when `info`'s selection asks for it, primes the loader
 * with the parent and keeps the page for the connection's loader. Reads nothing otherwise.
 */
export async function readAlong<Parent>(ref: ParentRef<Parent>, ctx: GraphQLContext, id: string, info: GraphQLResolveInfo): Promise<void> {
  const along = byParentType.get(ref.name);
  const args = along && askedOnce(info, ref.name, along.field);
  if (!along || !args) return;
  let page: PageArgs;
  try {
    page = pageArgsFromConnection(args);
  } catch {
    return; // the connection's loader answers the arguments' error, in its place
  }
  if (page.startingAfter !== undefined || page.endingBefore !== undefined || page.backward) return;
  // Arguments the service refuses (a filter's value) are answered by the connection's loader, in its
  // place; any other failure is the field's, as the loaders' would be.
  const read = await along.read(ctx, id, page, args).catch((err: unknown) => {
    if (err instanceof DomainError) return undefined;
    throw err;
  });
  if (!read?.parent) return;
  ref.getDataloader(ctx).prime(id, read.parent as Parent);
  let pages = pagesByRequest.get(ctx);
  if (!pages) pagesByRequest.set(ctx, (pages = new Map()));
  pages.set(keyOf(along.field, id, args), read.page);
}

/**
 * For a connection's loader (src/graphql/loaders.ts childConnections): reads the pages of the
 * parents none was read along for with `pagesOf`, and answers the others' with the page read.
 */
export function withPagesReadAlong<Args extends ConnectionArgs, R>(
  field: string,
  pagesOf: (ctx: GraphQLContext, parentIds: readonly string[], page: PageArgs, args: Args) => Promise<Map<string, R>>,
): (ctx: GraphQLContext, parentIds: readonly string[], page: PageArgs, args: Args) => Promise<Map<string, R>> {
  return async (ctx, parentIds, page, args) => {
    const pages = pagesByRequest.get(ctx);
    const taken = new Map<string, R>();
    if (pages) {
      for (const id of parentIds) {
        const key = keyOf(field, id, args);
        const found = pages.get(key);
        if (found) {
          taken.set(id, found as R);
          pages.delete(key);
        }
      }
    }
    if (taken.size === parentIds.length) return taken;
    const rest = await pagesOf(
      ctx,
      parentIds.filter((id) => !taken.has(id)),
      page,
      args,
    );
    return new Map([...rest, ...taken]);
  };
}

/** One key per connection, parent and arguments: an argument sent as null is one left out. */
function keyOf(field: string, parentId: string, args: object): string {
  const given = Object.entries(args)
    .filter(([, v]) => v !== null && v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([field, parentId, given]);
}

/**
 * The arguments `field` of `typeName` is asked with in `info`'s selection, when it is asked with
 * one set of arguments and no directive on the way to it; undefined otherwise.
 */
function askedOnce(info: GraphQLResolveInfo, typeName: string, field: string): ConnectionArgs | undefined {
  const type = info.schema.getType(typeName);
  const definition = isObjectType(type) ? type.getFields()[field] : undefined;
  if (!definition) return undefined;
  // The field's nodes are the document's: found once per parsed document (yoga keeps one per query text).
  let nodes = nodesByField.get(info.fieldNodes[0]!);
  if (!nodes) nodesByField.set(info.fieldNodes[0]!, (nodes = connectionNodes(info, typeName, field)));
  if (nodes.length === 0) return undefined;
  const asked = nodes.map((node) => getArgumentValues(definition, node, info.variableValues) as ConnectionArgs);
  const key = keyOf(field, '', asked[0]!);
  return asked.every((a) => keyOf(field, '', a) === key) ? asked[0] : undefined;
}
const nodesByField = new WeakMap<FieldNode, FieldNode[]>();

/** The nodes asking for `field` in the parent field's selection; none when one is under a directive. */
function connectionNodes(info: GraphQLResolveInfo, typeName: string, field: string): FieldNode[] {
  const nodes: FieldNode[] = [];
  let plain = true;
  // `conditional`: under a fragment with a directive (@include, @skip), which the field may or may not be.
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>, conditional: boolean) => {
    for (const selection of set?.selections ?? []) {
      const under = conditional || (selection.directives?.length ?? 0) > 0;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== field) continue;
        if (under) plain = false;
        nodes.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!selection.typeCondition || selection.typeCondition.name.value === typeName) visit(selection.selectionSet, seen, under);
      } else if (!seen.has(selection.name.value)) {
        const fragment = info.fragments[selection.name.value];
        if (fragment?.typeCondition.name.value === typeName) visit(fragment.selectionSet, new Set([...seen, selection.name.value]), under);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, new Set(), false);
  return plain ? nodes : [];
}
