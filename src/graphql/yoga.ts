import { GraphQLError } from 'graphql';
import { createYoga, type GraphiQLOptions, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../config.ts';
import { DomainError, errorExtensions } from '../platform/errors.ts';
import type { Ctx } from '../platform/request-context.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { Pipeline } from '../platform/pipeline.ts';
import { graphqlSchema } from './schema.ts';
import { operationLimits, queryCostLimits } from './limits.ts';
import { compilable, compiledExecution } from './compiled-execution.ts';
import { GraphQLDomainError, isGraphQLError, restated } from './errors.ts';
import type { ServerContext } from './context.ts';
import { useCatalogueCodes } from './plugins/catalogue-codes.ts';
import { useCsrfPrevention } from './plugins/csrf-prevention.ts';
import { useDisableIntrospection } from './plugins/disable-introspection.ts';
import { useLogUnexpectedErrors } from './plugins/log-unexpected-errors.ts';
import { useLookupTokenScope } from './plugins/lookup-token-scope.ts';
import { useClientSessionScope } from './plugins/client-session-scope.ts';
import { useTextRule } from './plugins/text-rule.ts';
import { useTrustedDocuments } from './plugins/trusted-documents.ts';
import { TrustedDocumentCache } from '../modules/trusted-documents/index.ts';
import { useWriteStage } from './plugins/write-stage.ts';
import { asGraphQLError, transportError } from './transport-errors.ts';
import { hideSuggestions } from './hide-suggestions.ts';
import { useSubscriptions } from './subscriptions.ts';

export type GraphQLServer = YogaServerInstance<ServerContext, Ctx>;

export function createGraphQL(config: Config, pipeline: Pipeline, metrics: Pick<Metrics, 'executed'>): GraphQLServer {
  return createYoga<ServerContext, Ctx>({
    schema: compilable(graphqlSchema()),
    graphqlEndpoint: '/graphql',
    // The request's use-case context (src/graphql/http.ts) is the GraphQL context. The GraphiQL page
    // has none, and yoga answers it before building any (its useGraphiQL plugin's onRequest).
    context: ({ ctx }) => {
      if (!ctx) throw new Error('A GraphQL request reached execution without its use-case context');
      return ctx;
    },
    landingPage: false,
    // yoga's CORS is off: its default reflected any origin with credentials allowed. src/graphql/cors.ts
    // answers by the resellers' allow-lists, and only client sessions' requests (docs/partner-guide.md
    // "Calling from a browser"); an API key belongs on a server and needs no CORS.
    cors: false,
    // GraphiQL with its assets bundled, so the page works without reaching a CDN: 28 MB of strings
    // once loaded, imported on the first page a browser asks for, so a process that only serves
    // the API (each `serve --workers` worker among them) never holds them.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    graphiql: graphiqlOptions(),
    logging: false,
    // The body limit is enforced before yoga sees the request (src/graphql/http.ts reads the body with
    // pipeline.bodyLimit and hands yoga the bytes): yoga's own would pipe every body through a stream.
    maxRequestBodySize: false,
    // GraphQL over HTTP's persisted documents name the document in `documentId` (plugins/trusted-documents.ts).
    extraParamNames: ['documentId'],
    // Domain errors keep their catalogue code; anything else is masked, with only the request id.
    maskedErrors: {
      maskError(error, message) {
        // Resolver errors can arrive wrapped twice, by a GraphQLError of another module copy
        // (CJS/ESM), so `instanceof GraphQLError` misses it: unwrap by name to the cause.
        let original: unknown = error;
        while (isGraphQLError(original) && original.originalError) original = original.originalError;
        // A failure yoga caught outside execution (building the context, say) may be any Error: no place in the document.
        const masked = isGraphQLError(error) ? error : {};
        const requestId = isGraphQLError(error) ? error.extensions?.request_id : undefined;
        // Queries throw GraphQLDomainError (runQuery); it carries the same catalogue code.
        if (original instanceof DomainError || original instanceof GraphQLDomainError) {
          return restated(masked, original.message, {
            code: original.code,
            type: original.type,
            ...(original.param ? { param: original.param } : {}),
          });
        }
        // yoga's transport failures (body, method, operation) leave with their catalogue code.
        const transport = isGraphQLError(error) ? transportError(error) : undefined;
        if (transport) return asGraphQLError(transport, requestId);
        if (error instanceof GraphQLError && !error.originalError) return error;
        // The database unreachable: 503 with Retry-After (yoga takes both from `http`), data or not.
        const down = pipeline.unavailable(original);
        if (down) {
          return restated(masked, down.message, {
            ...errorExtensions(down),
            http: { status: down.status, headers: down.headers },
          });
        }
        return restated(masked, message, errorExtensions(new DomainError('internal_error', message), requestId));
      },
    },
    // yoga's parse and validation caches stay on: the cost limit, which depends on the variables,
    // is checked per request (limits.ts) before execution.
    plugins: [
      // CSRF prevention (yoga's csrfPrevention rule, answering a catalogue code): plugins/csrf-prevention.ts.
      useCsrfPrevention(),
      useLogUnexpectedErrors(pipeline),
      // A client-session token's operation outside its scopes is refused first, before the limits
      // read its variables: whatever else is wrong with it, the answer is 403 (docs/partner-guide.md "Client sessions").
      useClientSessionScope(),
      operationLimits(),
      queryCostLimits(),
      compiledExecution(metrics),
      // After graphql-jit's plugin: a subscription runs each event on graphql-js, on a context of its own.
      useSubscriptions(),
      // The pipeline's GraphQL edge (src/platform/pipeline.ts), one concern each, in this order: a
      // caller the lookup-token scope refuses never reaches the write stage.
      useTextRule(),
      // Before any stage that reads the document: a request naming a trusted document gets its text here.
      ...useTrustedDocuments(new TrustedDocumentCache()),
      useLookupTokenScope(),
      useWriteStage(pipeline),
      useCatalogueCodes(),
      ...(config.GRAPHQL_INTROSPECTION ? [] : [useDisableIntrospection()]),
      ...(config.GRAPHQL_INTROSPECTION && config.NODE_ENV !== 'production' ? [] : [hideSuggestions()]),
    ],
  });
}

/**
 * GraphiQL's first document: one named operation per main flow, with variables. Run them in
 * order: the ids each one needs come from the one before (Passes → IssuePass → IssuedPass;
 * ProvidersNear → SpaAvailability). Held valid against the schema by test/first-hour/graphiql.test.ts.
 */
export const GRAPHIQL_QUERY = `# Send a demo API key (printed by \`npm start\`) in the Headers tab:
#   {"Authorization": "Bearer sk_..."}
# Pick an operation with the run button; replace the <...> values in the Variables tab.

query Passes($first: Int = 10, $after: String) {
  passes(first: $first, after: $after) {
    edges { node { id name price currency paymentModel categories { type tiers visitsAllowed creditAllocated } } }
    pageInfo { hasNextPage endCursor }
  }
}

# Add an "Idempotency-Key" header with a fresh value per new pass; a retry sends the same one.
mutation IssuePass($passId: ID!, $email: String!) {
  issuePass(input: { passId: $passId, firstName: "Ada", lastName: "Lovelace", email: $email }) {
    __typename
    ... on IssuedPassPayload { issuedPass { id passcode status startDate expiresAt client { id } } }
    ... on Error { code message }
    ... on InputError { param }
  }
}

query IssuedPass($clientId: ID!) {
  issuedPass(clientId: $clientId) {
    id passcode status startDate expiresAt
    pass { id name }
    client { id firstName lastName email creditBalance }
    categories { type visitsAllowed visitsUsed creditAllocated }
  }
}

# The demo catalogue has providers in Berlin (52.52, 13.405), New York (40.7549, -73.984) and Tokyo (35.658, 139.7016).
query ProvidersNear($lat: Float = 52.52, $lon: Float = 13.405, $radiusKm: Float = 5, $category: ProviderCategory) {
  providers(near: { lat: $lat, lon: $lon, radiusKm: $radiusKm }, category: $category, first: 5) {
    edges {
      node {
        id name category tier city distanceKm timezone
        services(first: 3) { edges { node { id name durationMinutes credits } } }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}

query Classes($lat: Float = 52.52, $lon: Float = 13.405, $classCategory: String = "Yoga") {
  classes(near: { lat: $lat, lon: $lon, radiusKm: 10 }, category: $classCategory, first: 5) {
    edges {
      node {
        id name durationMinutes distanceKm
        category { name }
        provider { id name }
        instances(first: 3) { edges { node { id date time spotsRemaining status } } }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}

# A spa's id and service ids come from ProvidersNear with "category": "SPA"; the date is local to the spa.
query SpaAvailability($spaId: ID!, $serviceIds: [ID!]!, $date: Date!) {
  spaAvailability(spaId: $spaId, serviceIds: $serviceIds, date: $date) {
    timezone durationMinutes
    spa { name }
    services { name durationMinutes }
    slots { time startsAt available }
  }
}
`;

/** The Variables tab's first content, shared by the operations (each reads the ones it declares); the <...> values say where each id comes from. */
export const GRAPHIQL_VARIABLES = JSON.stringify(
  {
    first: 10,
    passId: '<a pass id from Passes>',
    email: 'ada@example.com',
    clientId: '<issuedPass.client.id from IssuePass>',
    category: 'SPA',
    spaId: '<a SPA provider id from ProvidersNear>',
    serviceIds: ['<a service id of that spa from ProvidersNear>'],
    date: '<a date, YYYY-MM-DD, today or later>',
  },
  null,
  2,
);

// GraphiQL 5 fills its Variables editor only from `variables` (a tab's own variables are not shown
// on first load); yoga hands every option to the page, though its type does not list this one.
const graphiqlOptions = (): GraphiQLOptions => {
  const options = { title: 'Reseller gateway GraphiQL', defaultQuery: GRAPHIQL_QUERY, variables: GRAPHIQL_VARIABLES };
  return options;
};
