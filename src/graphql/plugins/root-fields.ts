import type { ClientSessionScopeName } from '../../platform/request-context.ts';
import { Kind, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';

export interface RootField {
  name: string;
  /** The field's `takesLookupToken` extension (src/graphql/use-case.ts). */
  lookupToken: boolean;
  /** The field's `showsSecretOnce` extension (src/graphql/use-case.ts). */
  secretOnce: boolean;
  /** The field's `clientSession` extension (src/graphql/use-case.ts): the scope a client-session token needs for it. */
  clientSession?: ClientSessionScopeName;
}

/** The root fields an operation selects (through fragments), with their extensions. */
export function rootFields(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): RootField[] {
  const type = schema.getRootType(operation.operation);
  const fields = type?.getFields() ?? {};
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const found: RootField[] = [];
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const extensions = fields[s.name.value]?.extensions ?? {};
        found.push({
          name: s.name.value,
          lookupToken: extensions.takesLookupToken === true,
          secretOnce: extensions.showsSecretOnce === true,
          ...(extensions.clientSession ? { clientSession: extensions.clientSession } : {}),
        });
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        walk(s.selectionSet);
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return found;
}
