import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * The field names the query selects at `path` below the field being resolved (for a connection,
 * `['edges', 'node']`: what is asked of each node), through inline fragments and fragment spreads
 * at every level. A superset: `@skip`/`@include` are not evaluated, and a fragment counts whatever
 * its type condition. A list can read only the columns behind these fields (docs/architecture.md "Request pipeline").
 * Kept per field node and path: yoga caches a query's parsed document, so a query sent again
 * resolves with the same (immutable) nodes and its fields are not walked again.
 */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[]): ReadonlySet<string> {
  // A field the query names twice (merged, from two selections) is walked each time.
  if (info.fieldNodes.length !== 1) return walk(info, path);
  let byPath = selections.get(info.fieldNodes[0]);
  if (!byPath) selections.set(info.fieldNodes[0], (byPath = new Map()));
  const key = path.join('.');
  let fields = byPath.get(key);
  if (!fields) byPath.set(key, (fields = walk(info, path)));
  return fields;
}

const selections = new WeakMap<FieldNode, Map<string, ReadonlySet<string>>>();

function walk(info: GraphQLResolveInfo, path: readonly string[]): Set<string> {
  let sets = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  for (const name of path) {
    sets = sets.flatMap((set) =>
      fieldsOf(set, info.fragments)
        .filter((f) => f.name === name && f.selectionSet)
        .map((f) => f.selectionSet!),
    );
  }
  return new Set(sets.flatMap((set) => fieldsOf(set, info.fragments).map((f) => f.name)));
}

interface SelectedField {
  name: string;
  selectionSet: SelectionSetNode | undefined;
}

/** The fields of one selection set with its fragments spread (each named fragment once). */
function fieldsOf(set: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>, seen = new Set<string>()): SelectedField[] {
  return set.selections.flatMap((s): SelectedField[] => {
    if (s.kind === Kind.FIELD) return [{ name: s.name.value, selectionSet: s.selectionSet }];
    if (s.kind === Kind.INLINE_FRAGMENT) return fieldsOf(s.selectionSet, fragments, seen);
    const fragment = fragments[s.name.value];
    if (!fragment || seen.has(s.name.value)) return [];
    seen.add(s.name.value);
    return fieldsOf(fragment.selectionSet, fragments, seen);
  });
}
