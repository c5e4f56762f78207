// The one error catalogue: code → HTTP status, error type and a one-line meaning.
// Services throw catalogue codes; only the edges (REST, GraphQL) turn them into responses.

export const errorTypes = {
  invalid_request_error: 'The request is invalid or names something that does not exist.',
  authentication_error: 'The caller could not be authenticated.',
  permission_error: 'The caller may not perform this operation.',
  idempotency_error: 'The Idempotency-Key cannot be used for this request.',
  resource_conflict_error: 'The request conflicts with the current state of a resource.',
  unprocessable_error: 'The request is well-formed but cannot be carried out now.',
  rate_limit_error: 'Too many requests.',
  api_error: 'The service failed; retry with the same Idempotency-Key.',
} as const;

export type ErrorType = keyof typeof errorTypes;

interface CatalogueEntry {
  status: number;
  type: ErrorType;
  meaning: string;
}

export const catalogue = {
  validation_error: { status: 400, type: 'invalid_request_error', meaning: 'A parameter is missing or invalid; `param` names it.' },
  invalid_cursor: { status: 400, type: 'invalid_request_error', meaning: 'The pagination cursor is not an id of this list.' },
  insufficient_credits: { status: 400, type: 'invalid_request_error', meaning: "The client's credit wallet cannot pay for this." },
  invalid_lookup_code: {
    status: 400,
    type: 'invalid_request_error',
    meaning: "The lookup code is wrong; it used one of the lookup's attempts (the message says how many are left).",
  },
  document_not_trusted: {
    status: 400,
    type: 'invalid_request_error',
    meaning: "This caller runs only the reseller's trusted documents: send `documentId`, not `query`.",
  },
  persisted_document_not_found: {
    status: 400,
    type: 'invalid_request_error',
    meaning: 'The reseller has no trusted document with this id.',
  },
  body_too_large: { status: 413, type: 'invalid_request_error', meaning: 'The request body is larger than 1 MiB.' },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    meaning: '/graphql does not read a body of this Content-Type (a form or text/plain is refused: CSRF); send application/json.',
  },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    meaning: 'The path exists but not with this method; `Allow` lists the methods it takes.',
  },
  resource_not_found: {
    status: 404,
    type: 'invalid_request_error',
    meaning: "No such resource for this caller (also for other resellers' resources).",
  },
  invalid_api_key: { status: 401, type: 'authentication_error', meaning: 'The bearer API key is missing, unknown or revoked.' },
  invalid_lookup_token: { status: 401, type: 'authentication_error', meaning: 'The Service-Lookup-Token is unknown or no longer valid.' },
  invalid_client_session: {
    status: 401,
    type: 'authentication_error',
    meaning: 'The client-session token is unknown, expired or revoked.',
  },
  permission_denied: { status: 403, type: 'permission_error', meaning: 'This caller may not perform this operation; nothing was changed.' },
  account_disabled: { status: 403, type: 'permission_error', meaning: "The reseller's account is disabled." },
  provider_not_covered: {
    status: 403,
    type: 'permission_error',
    meaning: "The client's pass does not cover this provider and no co-pay is offered.",
  },
  idempotency_key_reused: { status: 409, type: 'idempotency_error', meaning: 'The Idempotency-Key was used with a different request.' },
  idempotency_request_in_progress: {
    status: 409,
    type: 'idempotency_error',
    meaning: 'A request with this Idempotency-Key is still running; retry later.',
  },
  already_cancelled: { status: 409, type: 'resource_conflict_error', meaning: 'The booking is already cancelled; nothing changed.' },
  not_cancellable: { status: 409, type: 'resource_conflict_error', meaning: 'The booking cannot be cancelled in its status or time.' },
  slot_unavailable: { status: 409, type: 'resource_conflict_error', meaning: 'The slot is no longer available.' },
  class_full: { status: 409, type: 'resource_conflict_error', meaning: 'The class instance has no spots left.' },
  already_booked: { status: 409, type: 'resource_conflict_error', meaning: 'The client already holds a booking for this class instance.' },
  not_reschedulable: { status: 409, type: 'resource_conflict_error', meaning: 'The booking cannot be moved in its status or time.' },
  booking_status_conflict: {
    status: 409,
    type: 'resource_conflict_error',
    meaning: 'The booking is not in a status this change applies to (e.g. confirming a CANCELLED booking).',
  },
  class_not_bookable: { status: 409, type: 'resource_conflict_error', meaning: 'The class instance is cancelled or has started.' },
  pass_not_active: {
    status: 409,
    type: 'resource_conflict_error',
    meaning: "The client's pass is not ACTIVE, or expires before the appointment.",
  },
  session_already_confirmed: { status: 409, type: 'resource_conflict_error', meaning: 'The session was already used.' },
  access_code_used: { status: 409, type: 'resource_conflict_error', meaning: 'The access code was already redeemed; it is single use.' },
  lookup_not_pending: { status: 409, type: 'resource_conflict_error', meaning: 'The lookup is not waiting for verification.' },
  not_prepaid: { status: 409, type: 'resource_conflict_error', meaning: 'Only PREPAID passes can be renewed.' },
  pass_cancelled: { status: 409, type: 'resource_conflict_error', meaning: 'The issued pass is cancelled.' },
  endpoint_limit_reached: {
    status: 409,
    type: 'resource_conflict_error',
    meaning: 'The reseller has the most webhook endpoints it may have (16); delete one to add another.',
  },
  pass_unchanged: {
    status: 409,
    type: 'resource_conflict_error',
    meaning: 'The issued pass already has this pass package; nothing changed.',
  },
  renewal_required: {
    status: 409,
    type: 'resource_conflict_error',
    meaning: 'A PREPAID pass cannot expire after `paid_through`; renew it to pay for more.',
  },
  session_expired: { status: 422, type: 'unprocessable_error', meaning: 'The session is older than 24 hours; start again.' },
  access_code_expired: { status: 422, type: 'unprocessable_error', meaning: 'The access code expired unredeemed; create a new one.' },
  insufficient_balance: { status: 422, type: 'unprocessable_error', meaning: 'The business account cannot pay for this.' },
  lookup_expired: { status: 422, type: 'unprocessable_error', meaning: 'The lookup code expired; start a new lookup.' },
  rate_limited: { status: 429, type: 'rate_limit_error', meaning: 'Too many requests; retry after `Retry-After` seconds.' },
  internal_error: { status: 500, type: 'api_error', meaning: 'An unexpected error; nothing about it is revealed.' },
  service_unavailable: {
    status: 503,
    type: 'api_error',
    meaning: 'The database is unreachable; retry after `Retry-After` seconds with the same Idempotency-Key.',
  },
  too_many_subscriptions: {
    status: 503,
    type: 'api_error',
    meaning: 'This server process holds as many open subscription streams as it serves; retry after `Retry-After` seconds.',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;

/** A catalogue error raised by a service or an edge. `param` names the offending input field. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly param?: string;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: { param?: string; headers?: Record<string, string> } = {}) {
    super(message ?? catalogue[code].meaning);
    this.name = 'DomainError';
    this.code = code;
    this.param = options.param;
    this.headers = options.headers;
  }

  get status(): number {
    return catalogue[this.code].status;
  }
  get type(): ErrorType {
    return catalogue[this.code].type;
  }
}

/**
 * Constraints the database enforces for a rule the catalogue names, and that name: a write that
 * breaks one is refused, not failed. Balances are checked where their ledger rows are applied: a
 * wallet's as its row is inserted (src/modules/credits/credits.service.ts), the business
 * account's at COMMIT (src/modules/ledger/ledger.service.ts).
 */
const refusedBy: Readonly<Record<string, ErrorCode>> = {
  client_credit_balance_not_negative: 'insufficient_credits',
  business_account_balance_not_negative: 'insufficient_balance',
};

/** The catalogue error a database error stands for (a constraint of `refusedBy`, with PostgreSQL's message), if any. */
export function refusalOf(err: unknown): DomainError | undefined {
  const { code, constraint, message } = (err ?? {}) as { code?: unknown; constraint?: unknown; message?: unknown };
  const refused = code === '23514' && typeof constraint === 'string' ? refusedBy[constraint] : undefined;
  return refused ? new DomainError(refused, typeof message === 'string' ? message : undefined) : undefined;
}

export function domainError(code: ErrorCode, message?: string, param?: string): DomainError {
  return new DomainError(code, message, { param });
}

export function validationError(param: string, message: string): DomainError {
  return new DomainError('validation_error', message, { param });
}

export function notFound(what: string, id: string, param?: string): DomainError {
  return new DomainError('resource_not_found', `No such ${what}: '${id}'`, { param });
}

export interface ErrorBody {
  error: { type: ErrorType; code: ErrorCode; message: string; param?: string; request_id: string };
}

/** The error envelope (docs/errors.md): every surface's errors leave in it, or in one of the two shapes below built from it. */
export function errorBody(err: DomainError, requestId: string): ErrorBody {
  return {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      ...(err.param !== undefined ? { param: err.param } : {}),
      request_id: requestId,
    },
  };
}

/** The envelope's fields but the message, as a GraphQL error's extensions (`request_id` when known). */
export function errorExtensions(
  err: DomainError,
  requestId?: string,
): Omit<ErrorBody['error'], 'message' | 'request_id'> & { request_id?: string } {
  const { message: _, request_id: __, ...fields } = errorBody(err, '').error;
  return { ...fields, ...(requestId ? { request_id: requestId } : {}) };
}

/** The envelope in the GraphQL-over-HTTP response shape, for an error before execution (authentication, the body). */
export function graphqlErrorBody(err: DomainError, requestId: string): { errors: [{ message: string; extensions: ErrorBody['error'] }] } {
  const { error } = errorBody(err, requestId);
  return { errors: [{ message: error.message, extensions: error }] };
}
