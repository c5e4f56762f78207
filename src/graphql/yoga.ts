import { GraphQLError } from 'graphql';
import { createYoga, useErrorHandler, type YogaServerInstance } from 'graphql-yoga';
// GraphiQL with its assets bundled: the page works without reaching a CDN.
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { Config } from '../config.ts';
import { DomainError } from '../platform/errors.ts';
import type { Ctx } from '../platform/request-context.ts';
import type { Pipeline } from '../platform/pipeline.ts';
import { graphqlSchema } from './schema.ts';
import { operationLimits, queryCostLimits } from './limits.ts';
import { GraphQLDomainError } from './errors.ts';
import { pipelinePlugin, type ServerContext } from './pipeline-plugin.ts';

export type GraphQLServer = YogaServerInstance<ServerContext, Ctx>;

export function createGraphQL(config: Config, pipeline: Pipeline): GraphQLServer {
  return createYoga<ServerContext, Ctx>({
    schema: graphqlSchema(),
    graphqlEndpoint: '/graphql',
    // The request's use-case context (src/graphql/http.ts) is the GraphQL context; the GraphiQL page has none.
    context: ({ ctx }) => ctx ?? ({} as Ctx),
    landingPage: false,
    renderGraphiQL,
    graphiql: { title: 'Reseller gateway GraphiQL', defaultQuery: GRAPHIQL_QUERY },
    logging: false,
    // Domain errors keep their catalogue code; anything else is masked, with only the request id.
    maskedErrors: {
      maskError(error, message) {
        // Resolver errors can arrive wrapped twice, by a GraphQLError of another module copy
        // (CJS/ESM), so `instanceof GraphQLError` misses it: unwrap by name to the cause.
        let original: unknown = error;
        while ((original as Error)?.name === 'GraphQLError' && (original as GraphQLError).originalError) original = (original as GraphQLError).originalError;
        const requestId = (error as GraphQLError).extensions?.request_id;
        // Queries throw GraphQLDomainError (runQuery); it carries the same catalogue code.
        if (original instanceof DomainError || original instanceof GraphQLDomainError) {
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
    // yoga's parse and validation caches stay on: the cost limit, which depends on the variables,
    // is checked per request (limits.ts) before execution.
    plugins: [logUnexpectedErrors(), operationLimits(), queryCostLimits(), pipelinePlugin(pipeline), ...(config.GRAPHQL_INTROSPECTION ? [] : [disableIntrospection()])],
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
#     ... on IssuedPassPayload { issuedPass { id passcode status expiresAt client { id } } }
#     ... on Error { code message }
#     ... on InputError { param }
#   }
# }
`;

/** Unexpected resolver failures are masked for the caller; the log keeps them, with the request id. */
function logUnexpectedErrors() {
  return useErrorHandler(({ errors, context }) => {
    const ctx = context as Partial<Ctx>;
    for (const error of errors) {
      const original = (error as GraphQLError).originalError ?? error;
      if (original instanceof DomainError || original instanceof GraphQLDomainError) continue;
      if (error instanceof GraphQLError && !error.originalError) continue; // a validation error, not a failure
      ctx.log?.error({ err: original, path: (error as GraphQLError).path }, 'graphql resolver failed');
    }
  });
}
