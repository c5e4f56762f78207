import { BREAK, Kind, isAbstractType, visit, type DocumentNode, type GraphQLSchema } from 'graphql';
import { useGraphQlJit } from '@envelop/graphql-jit';
import type { Metrics } from '../platform/metrics.ts';

/**
 * Executes a document that comes back through graphql-jit, which compiles it once into a
 * JavaScript function instead of walking the document and the schema for every field of every
 * row (docs/architecture.md "Request pipeline"). Three conditions, checked per parsed document (yoga caches the
 * parse by query text, so a repeated query is the same DocumentNode):
 *
 * - **It holds one operation.** graphql-jit's plugin keeps one compiled function per document,
 *   whatever operation name the request picks: the second operation of a document would run the
 *   first one's code.
 * - **It holds no string literal.** graphql-jit writes argument literals into the source of the
 *   function it compiles, through JSON.stringify followed by regular-expression rewrites (one of
 *   them turns a string that starts with its Date marker into `new Date(<rest of the string>)`),
 *   so a caller's string literal could become code. Names cannot (the lexer admits only
 *   `[_A-Za-z][_0-9A-Za-z]*`), numbers, enums and booleans cannot, and variables are passed as
 *   values, never compiled. A document with a string literal runs on graphql-js as before.
 * - **It has run before.** Compiling costs more than one execution; a document sent once (a
 *   client that inlines changing literals) runs on graphql-js and never pays it.
 *
 * Which engine ran is counted (`graphql_executions_total` on GET /metrics). The schema goes
 * through `compilable` first. The plugin comes before the write stage's in yoga's list: that one
 * (src/graphql/plugins/write-stage.ts) wraps whatever executor is current into the mutation's
 * transaction, and must wrap this one, not be replaced by it.
 */
export function compiledExecution(metrics: Pick<Metrics, 'executed'>) {
  // Per parsed document: seen once so far, or compiled from now on, or never (`compilableDocument`).
  const documents = new WeakMap<DocumentNode, 'once' | 'compiled' | 'never'>();
  const compiles = (document: DocumentNode): boolean => {
    const state = documents.get(document);
    if (state === undefined) documents.set(document, compilableDocument(document) ? 'once' : 'never');
    else if (state === 'once') documents.set(document, 'compiled');
    return state === 'once' || state === 'compiled';
  };
  return useGraphQlJit(
    {},
    {
      enableIf({ document }) {
        const compiled = compiles(document);
        metrics.executed(compiled ? 'compiled' : 'graphql-js');
        return compiled;
      },
    },
  );
}

/** One operation and no string literal (quoted or block) anywhere: arguments, list and object values, variable defaults, directives. */
export function compilableDocument(document: DocumentNode): boolean {
  if (document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length !== 1) return false;
  let literal = false;
  visit(document, {
    [Kind.STRING]() {
      literal = true;
      return BREAK;
    },
  });
  return !literal;
}

/**
 * The schema as graphql-jit can run it. graphql-jit calls an abstract type's `resolveType` with
 * three arguments where graphql-js passes four: Pothos's error unions fall back to graphql-js's
 * default resolver, which needs the fourth (the abstract type) and threw without it. graphql-jit
 * also calls it outside any catch, where a throw would leave the request unanswered: called from
 * there, a throw answers undefined instead, which graphql-jit reports as that field's error.
 * graphql-js, which runs the same functions, passes the fourth argument and catches itself.
 */
export function compilable(schema: GraphQLSchema): GraphQLSchema {
  if (adapted.has(schema)) return schema;
  adapted.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isAbstractType(type) || !type.resolveType) continue;
    const resolveType = type.resolveType;
    type.resolveType = (value, context, info, abstractType) => {
      if (abstractType) return resolveType(value, context, info, abstractType); // graphql-js
      try {
        return resolveType(value, context, info, type);
      } catch {
        return undefined;
      }
    };
  }
  return schema;
}

const adapted = new WeakSet<GraphQLSchema>();
