import {
  GraphQLError,
  Kind,
  getOperationAST,
  type ASTVisitor,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError, validationError } from '../platform/errors.ts';
import { checkIdempotencyKey, fingerprint, UnstoredResponse } from '../platform/idempotency.ts';
import type { Pipeline } from '../platform/pipeline.ts';
import type { Ctx } from '../platform/request-context.ts';
import { checkJsonText, checkText, textProblem } from '../platform/text.ts';
import { restated } from './errors.ts';
import { asGraphQLError } from './transport-errors.ts';
import { showsSecretOnce, takesLookupToken } from './use-case.ts';

/** What src/graphql/http.ts hands yoga for one request (the GraphiQL page has no `ctx`). */
export interface ServerContext {
  ctx?: Ctx;
  rawIdempotencyKey?: string;
  requestId?: string;
}

type Params = { query?: string; variables?: Record<string, unknown> | null; operationName?: string | null; extensions?: unknown };

/**
 * The GraphQL edge of the request pipeline (src/platform/pipeline.ts), decided from what yoga
 * parsed, whatever the body format:
 * - the text rule on the parsed query, operation name, variables and string literals;
 * - a Service-Lookup-Token caller runs only root fields that take one (`takesLookupToken`), else 403;
 * - a mutation runs in the pipeline's write stage: Idempotency-Key, one transaction, the record;
 * - request errors carry catalogue codes, and `internal_error` the request id.
 */
export function pipelinePlugin(pipeline: Pipeline): Plugin<Record<string, unknown>, ServerContext> {
  return {
    onParams({ params, setResult, context }) {
      try {
        checkParamsText(params as Params);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        setResult({ errors: [requestError(err, context.ctx?.requestId)] });
      }
    },

    onValidate({ addValidationRule }) {
      addValidationRule((context: ValidationContext): ASTVisitor => ({
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
      }));
    },

    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const context = args.contextValue as unknown as Ctx & ServerContext & { params: Params };
      const refused = operation ? refusedForCaller(args.schema, args.document, operation, context) : undefined;
      if (refused) return setResultAndStopExecution({ errors: [requestError(refused, context.requestId)] });
      if (operation?.operation !== 'mutation') return;

      setExecuteFn(async (execArgs) => {
        const { params, requestId } = context;
        try {
          if (context.rawIdempotencyKey !== undefined && rootFields(args.schema, args.document, operation).some((f) => f.secretOnce)) {
            throw validationError(
              'Idempotency-Key',
              'This mutation shows a secret once and takes no Idempotency-Key: its answer is never stored',
            );
          }
          const written = await pipeline.write(
            { ...context, idempotencyKey: checkIdempotencyKey(context.rawIdempotencyKey) },
            () => fingerprint('graphql', params.query, params.variables ?? {}, params.operationName ?? null),
            async (tx) => {
              const result = (await executeFn({ ...execArgs, contextValue: { ...context, ...tx } })) as ExecutionResult;
              const response = { status: 200, body: result };
              // Top-level errors (unexpected failures) are not stored: roll back so a retry re-executes.
              if (result.errors?.length) throw new UnstoredResponse(response);
              return response;
            },
            // Each mutation field runs in its own savepoint (runMutation) and answers its domain errors as
            // typed results; a domain error reaching here failed the whole operation.
            (err) => ({ status: err.status, body: { errors: [requestError(err, requestId)] } }),
          );
          const body = written.body as ExecutionResult;
          // A replay is the stored result byte for byte; the header travels in yoga's `http` extension,
          // which yoga strips from the body.
          return written.replayed
            ? { ...body, extensions: { ...body.extensions, http: { headers: { 'X-Idempotent-Replayed': 'true' } } } }
            : body;
        } catch (err) {
          // A malformed key (400), a key reused with another request or still in progress (409),
          // the database unreachable (503 with Retry-After).
          const known = err instanceof DomainError ? err : pipeline.unavailable(err);
          if (known) return { errors: [requestError(known, requestId)] };
          throw err;
        }
      });
    },

    onResultProcess({ result, setResult, serverContext }) {
      if (Array.isArray(result) || !('errors' in result) || !result.errors?.length) return;
      const requestId = serverContext.ctx?.requestId ?? serverContext.requestId;
      setResult({ ...result, errors: result.errors.map((e) => withCatalogueCode(e as GraphQLError, !('data' in result), requestId)) });
    },
  };
}

interface RootField {
  name: string;
  lookupToken: boolean;
  secretOnce: boolean;
}

/** The root fields an operation selects (through fragments), with their extensions. */
function rootFields(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): RootField[] {
  const type = schema.getRootType(operation.operation);
  const fields = type?.getFields() ?? {};
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const found: RootField[] = [];
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const extensions = fields[s.name.value]?.extensions ?? {};
        found.push({
          name: s.name.value,
          lookupToken: extensions.takesLookupToken === takesLookupToken.takesLookupToken,
          secretOnce: extensions.showsSecretOnce === showsSecretOnce.showsSecretOnce,
        });
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        walk(s.selectionSet);
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return found;
}

/**
 * A Service-Lookup-Token caller (docs/partner-guide.md "Lookup") may select only root fields that take a token
 * (and `__typename`); anything else refuses the whole operation before it runs.
 */
function refusedForCaller(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  ctx: Partial<Ctx>,
): DomainError | undefined {
  if (ctx.caller?.kind !== 'reseller' || ctx.caller.lookup === undefined) return undefined;
  const other = rootFields(schema, document, operation).find((f) => !f.lookupToken && f.name !== '__typename');
  if (!other) return undefined;
  return new DomainError(
    'permission_denied',
    `A Service-Lookup-Token is not accepted on '${other.name}': it authorises only the ` +
      'looked-up client\'s bookings, access codes and reads (docs/partner-guide.md "Lookup")',
  );
}

function checkParamsText(params: Params): void {
  if (typeof params.query === 'string') checkText(params.query, 'query');
  if (typeof params.operationName === 'string') checkText(params.operationName, 'operationName');
  if (params.variables && typeof params.variables === 'object') checkJsonText(params.variables, 'variables', 'variables');
  if (params.extensions && typeof params.extensions === 'object') checkJsonText(params.extensions, 'extensions', 'extensions');
}

/** A DomainError raised before execution (Idempotency-Key, text rule) in GraphQL-over-HTTP shape. */
const requestError = (err: DomainError, requestId: string | undefined): GraphQLError => asGraphQLError(err, requestId);

const REQUEST_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

/**
 * Every error leaves with a catalogue code: a document that fails parsing or validation (including
 * literal coercion), or a request whose variables fail coercion (no `data` at all), is
 * `validation_error`, a 400 under `application/graphql-response+json`; `internal_error` carries
 * the request id so a report can be matched with the log.
 */
function withCatalogueCode(error: GraphQLError, requestFailed: boolean, requestId: string | undefined): GraphQLError {
  const extensions = { ...error.extensions } as Record<string, unknown>;
  const code = extensions.code as string | undefined;
  if (code === 'internal_error') {
    if (requestId) extensions.request_id = requestId;
  } else if (code === undefined || REQUEST_ERROR_CODES.has(code)) {
    if (!requestFailed) return error;
    extensions.code = 'validation_error';
    extensions.type = 'invalid_request_error';
    const http = (extensions.http ?? {}) as { status?: number; spec?: boolean };
    extensions.http = { ...http, status: http.status ?? 400, spec: http.spec ?? true };
  } else if (code === 'validation_error') {
    extensions.type ??= 'invalid_request_error';
  } else {
    return error;
  }
  return restated(error, error.message, extensions, true);
}
