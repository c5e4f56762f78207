import { GraphQLError, Source, type GraphQLErrorExtensions, type SourceLocation } from 'graphql';
import { DomainError, type ErrorType } from '../platform/errors.ts';
import { builder } from './builder.ts';

// The extensions every error of /graphql leaves with (docs/errors.md "GraphQL over HTTP"); yoga
// declares `http` beside them, the status and headers it answers with.
declare module 'graphql' {
  interface GraphQLErrorExtensions {
    /** The catalogue code; graphql-js's and yoga's own until they are restated as the catalogue's. */
    code?: string;
    type?: ErrorType;
    param?: string;
    request_id?: string;
  }
}

// Domain errors become typed members of a mutation's result union, one GraphQL type per
// catalogue error type; `code` is the same catalogue code the REST adapter answers with.

export class GraphQLDomainError extends Error {
  readonly code: string;
  readonly type: ErrorType;
  readonly param: string | null;
  constructor(err: DomainError) {
    super(err.message);
    this.code = err.code;
    this.type = err.type;
    this.param = err.param === undefined ? null : camelParam(err.param);
  }
}
export class InputError extends GraphQLDomainError {}
export class NotFoundError extends GraphQLDomainError {}
export class PermissionError extends GraphQLDomainError {}
export class IdempotencyError extends GraphQLDomainError {}
export class ConflictError extends GraphQLDomainError {}
export class UnprocessableError extends GraphQLDomainError {}

/** V3 field names (snake_case) are shown as the GraphQL input's camelCase names. */
function camelParam(param: string): string {
  return param.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

export function toGraphQLError(err: DomainError): GraphQLDomainError {
  if (err.code === 'resource_not_found') return new NotFoundError(err);
  switch (err.type) {
    case 'permission_error':
      return new PermissionError(err);
    case 'idempotency_error':
      return new IdempotencyError(err);
    case 'resource_conflict_error':
      return new ConflictError(err);
    case 'unprocessable_error':
      return new UnprocessableError(err);
    default:
      return new InputError(err);
  }
}

const ErrorInterface = builder.interfaceRef<GraphQLDomainError>('Error').implement({
  description: 'A failure the caller can act on. `code` is the catalogue code, as in the REST adapter.',
  fields: (t) => ({
    code: t.exposeString('code'),
    message: t.exposeString('message'),
  }),
});

const errorTypes = [
  [InputError, 'InputError', 'The input is invalid (400 in REST); `param` names the field.'],
  [NotFoundError, 'NotFoundError', 'Nothing of that id exists for this caller (404 in REST).'],
  [PermissionError, 'PermissionError', 'The caller may not do this (403 in REST).'],
  [IdempotencyError, 'IdempotencyError', 'The Idempotency-Key cannot be used for this request (409 in REST).'],
  [ConflictError, 'ConflictError', 'The request conflicts with the current state (409 in REST).'],
  [UnprocessableError, 'UnprocessableError', 'The request cannot be carried out now (422 in REST).'],
] as const;

for (const [cls, name, description] of errorTypes) {
  builder.objectType(cls, {
    name,
    description,
    interfaces: [ErrorInterface],
    fields: (t) => ({ param: t.exposeString('param', { nullable: true }) }),
  });
}

/** Every error class a mutation can answer with; each mutation lists them in its union. */
export const mutationErrors = [InputError, NotFoundError, PermissionError, IdempotencyError, ConflictError, UnprocessableError];

/** Maps a thrown DomainError to its GraphQL error class so the errors plugin can type it. */
export async function asGraphQLErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError) throw toGraphQLError(err);
    throw err;
  }
}

/** A GraphQLError of any copy of graphql-js (CJS or ESM): `instanceof GraphQLError` sees only this one's. */
export function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof Error && error.name === 'GraphQLError';
}

/** Where an error is in the document and the response; an error raised outside execution has none of it. */
type ErrorPlace = Partial<Pick<GraphQLError, 'nodes' | 'path' | 'locations' | 'originalError' | 'source' | 'positions'>>;

/**
 * `error` with another message and extensions, at the same path and locations, and with its
 * original error when `keepOriginal`. graphql-jit's errors (src/graphql/compiled-execution.ts)
 * carry their locations without the AST nodes behind them, and yoga rebuilds every error from its
 * nodes or its source and positions when it writes the response: such locations are restated as
 * positions in a blank source of the same shape, so graphql-js and graphql-jit answer alike.
 */
export function restated(error: ErrorPlace, message: string, extensions: GraphQLErrorExtensions, keepOriginal = false): GraphQLError {
  const { nodes, path, locations, originalError } = error;
  const at =
    nodes?.length || error.source || !locations?.length ? { source: error.source, positions: error.positions } : positionsOf(locations);
  return new GraphQLError(message, { nodes, ...at, path, extensions, ...(keepOriginal ? { originalError } : {}) });
}

/** A source of blank lines, each as long as the widest column, and the offsets in it of `locations` (1-based line and column). */
function positionsOf(locations: readonly SourceLocation[]): { source: Source; positions: number[] } {
  const width = Math.max(...locations.map((l) => l.column));
  const lines = Math.max(...locations.map((l) => l.line));
  const source = new Source(Array.from({ length: lines }, () => ' '.repeat(width)).join('\n'));
  return { source, positions: locations.map((l) => (l.line - 1) * (width + 1) + l.column - 1) };
}
