import {
  GraphQLError,
  Kind,
  getOperationAST,
  parse,
  validate,
  type ASTVisitor,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type ValidationContext,
} from 'graphql';
import { complexityFromQuery, createComplexityRule } from '@pothos/plugin-complexity';
import { queryLimits } from './builder.ts';
import type { Plugin } from 'graphql-yoga';
import { DomainError, errorExtensions } from '../platform/errors.ts';

// docs/errors.md (Limits): documents past these limits are rejected at parse/validation time, before any
// resolver runs. Depth, breadth and cost are enforced by queryCostLimits, before execution.
export const MAX_TOKENS = 5000;
export const MAX_ALIASES = 30;
export const MAX_DIRECTIVES = 50;

function countingRule(kind: 'aliases' | 'directives', max: number) {
  return (context: ValidationContext): ASTVisitor => {
    let count = 0;
    const over = () =>
      context.reportError(new GraphQLError(`The operation uses more than ${max} ${kind}`, { extensions: { code: 'validation_error' } }));
    return kind === 'aliases'
      ? {
          Field(node) {
            if (node.alias && ++count === max + 1) over();
          },
        }
      : {
          Directive() {
            if (++count === max + 1) over();
          },
        };
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

/** Depth, breadth and cost, checked before execution: a rejected query runs no resolver. */
export function queryCostLimits(): Plugin {
  const costOfDocument = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  const check = ({
    args,
    setResultAndStopExecution,
  }: {
    args: ExecutionArgs;
    setResultAndStopExecution(result: ExecutionResult): void;
  }) => {
    const over = costErrors(
      args.schema,
      args.document,
      args.variableValues ?? {},
      args.operationName ?? undefined,
      args.contextValue as object,
      costOfDocument,
    );
    if (over.length > 0) setResultAndStopExecution({ errors: [...over] });
  };
  // A subscription's selection is executed once per event: held to the same limits before its stream opens.
  return { onExecute: check, onSubscribe: check };
}

/**
 * docs/errors.md (Limits): depth, breadth and cost from the fields' complexity settings, for this request's
 * variables (a cached validation must not let `first: 10` vouch for `first: 10000`). A document
 * without variables costs the same every time, so its verdict is kept with the parsed document.
 */
function costErrors(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | undefined,
  context: object,
  cache: WeakMap<DocumentNode, readonly GraphQLError[]>,
): readonly GraphQLError[] {
  const operation = getOperationAST(document, operationName);
  const cacheable = !operation?.variableDefinitions?.length;
  const cached = cacheable ? cache.get(document) : undefined;
  if (cached) return cached;
  const errors =
    costOfOnlyOperation(schema, document, variables, operationName, context) ??
    costByValidation(schema, document, variables, operationName, context);
  if (cacheable) cache.set(document, errors);
  return errors;
}

/**
 * The cost of a document of one operation by the plugin's complexityFromQuery, which walks only the
 * selections: the validation rule computes the same on the operation's entry, inside a walk of the
 * whole document by graphql-js's validation (docs/adr/0031-graphql-reads-as-plain-rows.md). Undefined for
 * anything else (several operations, another name, variables that do not coerce), which
 * costByValidation answers as before.
 */
function costOfOnlyOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | undefined,
  context: object,
): readonly GraphQLError[] | undefined {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1 || (operationName != null && operations[0].name?.value !== operationName)) return undefined;
  let result: ComplexityResult;
  try {
    result = complexityFromQuery(document, { schema, variables, ctx: context });
  } catch {
    return undefined;
  }
  const errors: GraphQLError[] = [];
  overLimits(result, (error) => errors.push(error));
  return errors;
}

function costByValidation(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | undefined,
  context: object,
): readonly GraphQLError[] {
  return validate(schema, document, [createComplexityRule({ context, variableValues: variables, operationName, validate: overLimits })]);
}

type ComplexityResult = ReturnType<typeof complexityFromQuery>;

function overLimits(result: ComplexityResult, reportError: (error: GraphQLError) => void): void {
  for (const limit of ['depth', 'breadth', 'complexity'] as const) {
    if (result[limit] <= queryLimits[limit]) continue;
    const message = `Query ${limit} ${result[limit]} exceeds the limit of ${queryLimits[limit]}`;
    const { code, type } = errorExtensions(new DomainError('validation_error', message));
    reportError(
      new GraphQLError(message, {
        extensions: { code, type, limit, max: queryLimits[limit], actual: result[limit], http: { status: 400, spec: true } },
      }),
    );
  }
}
