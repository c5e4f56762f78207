import { GraphQLError, Kind, type ASTVisitor, type ValidationContext } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import { DomainError } from '../../platform/errors.ts';
import { checkJsonText, checkText, textProblem } from '../../platform/text.ts';
import type { RequestPlugin } from '../context.ts';
import { asGraphQLError } from '../transport-errors.ts';

/**
 * The text rule (src/platform/text.ts) on what yoga parsed, whatever the body format: the query,
 * operation name, variables and extensions, then every string literal of the document; a problem is
 * 400 `validation_error` naming where it is. The bytes themselves were checked by src/graphql/http.ts.
 */
export function useTextRule(): RequestPlugin {
  return {
    onParams({ params, setResult, context }) {
      try {
        checkParamsText(params);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        setResult({ errors: [asGraphQLError(err, context.ctx?.requestId)] });
      }
    },

    onValidate({ addValidationRule }) {
      addValidationRule(literalsRule);
    },
  };
}

function checkParamsText(params: GraphQLParams): void {
  if (typeof params.query === 'string') checkText(params.query, 'query');
  if (typeof params.operationName === 'string') checkText(params.operationName, 'operationName');
  if (params.variables && typeof params.variables === 'object') checkJsonText(params.variables, 'variables', 'variables');
  if (params.extensions && typeof params.extensions === 'object') checkJsonText(params.extensions, 'extensions', 'extensions');
}

function literalsRule(context: ValidationContext): ASTVisitor {
  return {
    // A literal may spell NUL as "\u0000"; the lexer already refuses lone surrogates and raw control characters.
    StringValue(node, _key, parent, _path, ancestors) {
      const problem = textProblem(node.value);
      if (!problem) return;
      // param: the argument and input fields that hold the literal, e.g. input.firstName.
      const param = [...ancestors, parent ?? []]
        .flatMap((a) => ('kind' in a && (a.kind === Kind.ARGUMENT || a.kind === Kind.OBJECT_FIELD) ? [a.name.value] : []))
        .join('.');
      context.reportError(
        new GraphQLError(problem, { nodes: [node], extensions: { code: 'validation_error', ...(param ? { param } : {}) } }),
      );
    },
  };
}
