import { readFileSync } from 'node:fs';
import { Kind, parse, print, visit, type DefinitionNode, type FragmentDefinitionNode } from 'graphql';

const documents = parse(readFileSync(new URL('./passes.graphql', import.meta.url), 'utf8'));

/** The named operation of passes.graphql with the fragments it spreads, as sendable text. */
export function operation(name: string): string {
  const op = documents.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === name);
  if (!op) throw new Error(`passes.graphql has no operation named ${name}`);
  const fragments = new Map(
    documents.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const needed: DefinitionNode[] = [op];
  const seen = new Set<string>();
  for (let i = 0; i < needed.length; i++) {
    visit(needed[i], {
      FragmentSpread(spread) {
        if (seen.has(spread.name.value)) return;
        seen.add(spread.name.value);
        const fragment = fragments.get(spread.name.value);
        if (!fragment) throw new Error(`passes.graphql has no fragment named ${spread.name.value}`);
        needed.push(fragment);
      },
    });
  }
  return needed.map((d) => print(d)).join('\n\n');
}
