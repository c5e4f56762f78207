import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { createComplexityRule } from '@pothos/plugin-complexity';
import { queryLimits } from './builder.ts';

interface RequestParams { variables?: Record<string, unknown> | null; operationName?: string | null }

/**
 * decisions §14: depth, breadth (fields selected) and cost, computed from the fields' complexity
 * settings in builder.ts, are checked while validating, so a rejected query runs no resolver.
 * The cost of `passes(first: $n)` depends on the variables: validation results must not be
 * cached by document alone (yoga.ts turns that cache off).
 */
export function queryCostLimits(): Plugin {
  return {
    onValidate({ addValidationRule, context }) {
      const params = (context as { params?: RequestParams }).params;
      addValidationRule(createComplexityRule({
        context,
        variableValues: params?.variables ?? {},
        operationName: params?.operationName,
        validate(result, reportError) {
          for (const limit of ['depth', 'breadth', 'complexity'] as const) {
            if (result[limit] <= queryLimits[limit]) continue;
            reportError(new GraphQLError(`Query ${limit} ${result[limit]} exceeds the limit of ${queryLimits[limit]}`, {
              extensions: { code: 'validation_error', type: 'invalid_request_error', limit, max: queryLimits[limit], actual: result[limit] },
            }));
          }
        },
      }));
    },
  };
}
