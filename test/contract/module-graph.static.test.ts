import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// ESLint's import-x/no-cycle sees cycles between files; this sees them between modules
// (docs/architecture.md "Module boundaries"): module A depends on B when a file of A imports a file
// of B at run time (`import type` and all-`type` specifiers do not count). A cycle there means
// neither module can be understood, tested or loaded without the other, so the graph stays acyclic.

const modulesDir = new URL('../../src/modules/', import.meta.url).pathname;

/** The relative specifiers a file imports or re-exports at run time, dynamic `import()` included. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined && ts.isNamedExports(node.exportClause) && node.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) specifiers.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((s) => s.startsWith('.'));
}

/** Each module's runtime dependencies on other modules, with one file import that shows each. */
function moduleGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const m of readdirSync(modulesDir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    const deps = new Map<string, string>();
    for (const f of readdirSync(join(modulesDir, m.name)).filter((f) => f.endsWith('.ts'))) {
      for (const specifier of runtimeImports(join(modulesDir, m.name, f))) {
        const target = join(modulesDir, m.name, specifier);
        if (!target.startsWith(modulesDir)) continue;
        const other = target.slice(modulesDir.length).split('/')[0]!;
        if (other !== m.name && !deps.has(other)) deps.set(other, `${m.name}/${f} → ${other}/${target.split('/').pop()}`);
      }
    }
    graph.set(m.name, deps);
  }
  return graph;
}

/** Every cycle, once each, as the path of file imports that closes it. */
function cycles(graph: Map<string, Map<string, string>>): string[] {
  const found = new Set<string>();
  const reported: string[] = [];
  const walk = (start: string, at: string, path: string[]): void => {
    for (const [next, via] of graph.get(at) ?? []) {
      if (next === start) {
        const members = [...path.map((p) => p.split('/')[0]!), at].sort().join(',');
        if (!found.has(members)) {
          found.add(members);
          reported.push([...path, via].join('; '));
        }
      } else if (next > start && !path.some((p) => p.startsWith(`${next}/`))) {
        walk(start, next, [...path, via]);
      }
    }
  };
  for (const m of [...graph.keys()].sort()) walk(m, m, []);
  return reported;
}

describe('module dependency graph (src/modules)', () => {
  it('has no cycle between modules', () => {
    expect(cycles(moduleGraph())).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['a', new Map([['b', 'a/x.ts → b/index.ts']])],
      ['b', new Map([['c', 'b/y.ts → c/index.ts']])],
      ['c', new Map([['a', 'c/z.ts → a/index.ts']])],
    ]);
    expect(cycles(graph)).toEqual(['a/x.ts → b/index.ts; b/y.ts → c/index.ts; c/z.ts → a/index.ts']);
  });
});
