import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// graphql-js ends a validation error with "Did you mean …?", naming fields, types and enum values
// of the schema: with introspection off (or in production) that would hand the schema out one
// typo at a time, so the suggestion is cut; the error itself stays.
const SUGGESTION = / ?Did you mean [^?]*\?/g;

const suggests = (e: Error) => e.message.includes('Did you mean');

export function hideSuggestions(): Plugin {
  return {
    onValidate() {
      return ({ result, setResult }) => {
        if (!result.some(suggests)) return;
        setResult(
          result.map((e) =>
            e instanceof GraphQLError && suggests(e)
              ? new GraphQLError(e.message.replace(SUGGESTION, ''), {
                  nodes: e.nodes,
                  source: e.source,
                  positions: e.positions,
                  path: e.path,
                  extensions: e.extensions,
                })
              : e,
          ),
        );
      };
    },
  };
}
