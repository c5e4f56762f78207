import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import type { RequestPlugin } from '../context.ts';

/** With GRAPHQL_INTROSPECTION=false (docs/operator-guide.md), `__schema` and `__type` are refused at validation; other fields run. */
export function useDisableIntrospection(): RequestPlugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule((context: ValidationContext): ASTVisitor => ({
        Field(node) {
          if (node.name.value === '__schema' || node.name.value === '__type') {
            context.reportError(new GraphQLError('Introspection is disabled', { extensions: { code: 'validation_error' } }));
          }
        },
      }));
    },
  };
}
