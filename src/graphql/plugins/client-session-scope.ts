import { getOperationAST, type DocumentNode, type GraphQLSchema } from 'graphql';
import { DomainError } from '../../platform/errors.ts';
import { clientSessionOf, type Ctx } from '../../platform/request-context.ts';
import type { ExecutionPlugin } from '../context.ts';
import { asGraphQLError } from '../transport-errors.ts';
import { rootFields } from './root-fields.ts';

/**
 * A client-session token (docs/partner-guide.md "Client sessions") runs only root fields marked for
 * it (`clientSession`, src/graphql/use-case.ts) whose scope it holds: src/graphql/http.ts
 * authenticated the token, and any other root field refuses the whole operation, a top-level 403,
 * before anything runs. The use cases then hold the token to its one client.
 */
export function useClientSessionScope(): ExecutionPlugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      if (refused) setResultAndStopExecution({ errors: [asGraphQLError(refused, args.contextValue.requestId)] });
    },
    // A subscription never reaches onExecute: the same rule before its stream opens.
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      if (refused) setResultAndStopExecution({ errors: [asGraphQLError(refused, args.contextValue.requestId)] });
    },
  };
}

/** The refusal of a client-session caller's operation selecting a root field not marked for it, or marked with a scope it lacks. */
function refusal(args: {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  contextValue: Ctx;
}): DomainError | undefined {
  const session = clientSessionOf(args.contextValue);
  if (!session) return undefined;
  const operation = getOperationAST(args.document, args.operationName);
  const fields = operation ? rootFields(args.schema, args.document, operation) : [];
  const refused = fields.find((f) => f.name !== '__typename' && (!f.clientSession || !session.scopes.includes(f.clientSession)));
  // An operation yoga could not pick (no operation AST) is refused too: nothing runs unchecked.
  if (operation && !refused) return undefined;
  return new DomainError(
    'permission_denied',
    refused?.clientSession
      ? `This client-session token lacks the '${refused.clientSession}' scope that '${refused.name}' needs`
      : `A client-session token is not accepted on '${refused?.name ?? 'this operation'}': it acts only for its ` +
          'one client within its scopes (docs/partner-guide.md "Client sessions")',
  );
}
