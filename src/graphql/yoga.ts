import { GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../config.ts';
import { DomainError } from '../platform/errors.ts';
import type { Ctx } from '../platform/request-context.ts';
import { graphqlSchema } from './schema.ts';

/** The server passes the request's use-case context; yoga uses it as the GraphQL context. */
export interface ServerContext { ctx: Ctx }

export function createGraphQL(config: Config): YogaServerInstance<ServerContext, Ctx> {
  return createYoga<ServerContext, Ctx>({
    schema: graphqlSchema(),
    graphqlEndpoint: '/graphql',
    context: ({ ctx }) => ctx,
    landingPage: false,
    graphiql: { title: 'Reseller gateway GraphiQL', defaultQuery: GRAPHIQL_QUERY },
    logging: false,
    // Domain errors keep their catalogue code; anything else is masked, with only the request id.
    maskedErrors: {
      maskError(error, message) {
        const original = error instanceof GraphQLError ? error.originalError : error;
        const requestId = (error as GraphQLError).extensions?.request_id;
        if (original instanceof DomainError) {
          return new GraphQLError(original.message, {
            nodes: (error as GraphQLError).nodes, path: (error as GraphQLError).path,
            extensions: { code: original.code, type: original.type, ...(original.param ? { param: original.param } : {}) },
          });
        }
        if (error instanceof GraphQLError && !error.originalError) return error;
        return new GraphQLError(message, {
          nodes: (error as GraphQLError).nodes, path: (error as GraphQLError).path,
          extensions: { code: 'internal_error', type: 'api_error', ...(requestId ? { request_id: requestId } : {}) },
        });
      },
    },
    ...(config.GRAPHQL_INTROSPECTION ? {} : { plugins: [disableIntrospection()] }),
  });
}

function disableIntrospection() {
  return {
    onValidate({ addValidationRule }: { addValidationRule: (rule: unknown) => void }) {
      addValidationRule((context: { reportError: (e: GraphQLError) => void }) => ({
        Field(node: { name: { value: string } }) {
          if (node.name.value === '__schema' || node.name.value === '__type') {
            context.reportError(new GraphQLError('Introspection is disabled', { extensions: { code: 'validation_error' } }));
          }
        },
      }));
    },
  };
}

const GRAPHIQL_QUERY = `# Send your API key in the Headers tab: {"Authorization": "Bearer sk_..."}
query Passes {
  passes(first: 10) {
    edges { node { id name price currency paymentModel categories { type tiers visitsAllowed creditAllocated } } }
    pageInfo { hasNextPage endCursor }
  }
}

# mutation Issue($passId: ID!) {
#   issuePass(input: { passId: $passId, firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }) {
#     __typename
#     ... on IssuePassSuccess { payload { issuedPass { id passcode status expiresAt client { id } } } }
#     ... on Error { code message }
#     ... on InputError { param }
#   }
# }
`;
