import { getOperationAST, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { DomainError } from '../../platform/errors.ts';
import type { Ctx } from '../../platform/request-context.ts';
import type { ExecutionPlugin } from '../context.ts';
import { asGraphQLError } from '../transport-errors.ts';
import { rootFields } from './root-fields.ts';

/**
 * A Service-Lookup-Token caller (docs/partner-guide.md "Lookup") runs only root fields that take a
 * token (`takesLookupToken`, src/graphql/use-case.ts): src/graphql/http.ts authenticated the token,
 * and any other root field refuses the whole operation, a top-level 403, before it runs.
 */
export function useLookupTokenScope(): ExecutionPlugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const refused = operation ? refusedForCaller(args.schema, args.document, operation, args.contextValue) : undefined;
      if (refused) setResultAndStopExecution({ errors: [asGraphQLError(refused, args.contextValue.requestId)] });
    },
    // A subscription never reaches onExecute: the same rule before its stream opens (no subscription field takes a token).
    onSubscribe({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const refused = operation ? refusedForCaller(args.schema, args.document, operation, args.contextValue) : undefined;
      if (refused) setResultAndStopExecution({ errors: [asGraphQLError(refused, args.contextValue.requestId)] });
    },
  };
}

/** The refusal of a lookup-token caller's operation that selects another root field than `__typename` and those that take a token. */
function refusedForCaller(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  ctx: Pick<Ctx, 'caller'>,
): DomainError | undefined {
  if (ctx.caller.kind !== 'reseller' || ctx.caller.lookup === undefined) return undefined;
  const other = rootFields(schema, document, operation).find((f) => !f.lookupToken && f.name !== '__typename');
  if (!other) return undefined;
  return new DomainError(
    'permission_denied',
    `A Service-Lookup-Token is not accepted on '${other.name}': it authorises only the ` +
      'looked-up client\'s bookings, access codes and reads (docs/partner-guide.md "Lookup")',
  );
}
