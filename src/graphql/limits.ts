import { GraphQLError, parse, type ASTVisitor, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// decisions §14: documents past these limits are rejected at parse/validation time, before any
// resolver runs. Depth, breadth and cost are enforced in complexity.ts.
export const MAX_TOKENS = 5000;
export const MAX_ALIASES = 30;
export const MAX_DIRECTIVES = 50;

function countingRule(kind: 'aliases' | 'directives', max: number) {
  return (context: ValidationContext): ASTVisitor => {
    let count = 0;
    const over = () => context.reportError(new GraphQLError(
      `The operation uses more than ${max} ${kind}`, { extensions: { code: 'validation_error' } }));
    return kind === 'aliases'
      ? { Field(node) { if (node.alias && ++count === max + 1) over(); } }
      : { Directive() { if (++count === max + 1) over(); } };
  };
}

export function operationLimits(): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => parse(source, { ...options, maxTokens: MAX_TOKENS }));
    },
    onValidate({ addValidationRule }) {
      addValidationRule(countingRule('aliases', MAX_ALIASES));
      addValidationRule(countingRule('directives', MAX_DIRECTIVES));
    },
  };
}

