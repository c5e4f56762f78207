import { Kind, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * The field names the query selects at `path` below the field being resolved (for a connection,
 * `['edges', 'node']`: what is asked of each node), through inline fragments and fragment spreads
 * at every level. A superset: `@skip`/`@include` are not evaluated, and a fragment counts whatever
 * its type condition. A list can read only the columns behind these fields (README "Request pipeline").
 */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[]): Set<string> {
  let sets = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  for (const name of path) {
    sets = sets.flatMap((set) => fieldsOf(set, info.fragments).filter((f) => f.name === name && f.selectionSet).map((f) => f.selectionSet!));
  }
  return new Set(sets.flatMap((set) => fieldsOf(set, info.fragments).map((f) => f.name)));
}

interface SelectedField { name: string; selectionSet: SelectionSetNode | undefined }

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
