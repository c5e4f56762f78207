import { expect } from 'vitest';
import { catalogue, type ErrorCode } from '../../src/platform/errors.ts';
import type { TestApp } from './app.ts';
import { dbState, type DbState } from './db-state.ts';
import type { Reply } from './http.ts';

// Checks shared by every module's tests; each states what docs/errors.md promises of an answer.

/**
 * A V3 error reply: the status, the catalogue code with its documented type, a message, the request
 * id of the Request-Id header, and `param` as given — absent when not given (docs/errors.md).
 */
export function expectError(res: Reply, status: number, code: ErrorCode, param?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('request-id')).toMatch(/^req_/);
  expect(res.body.error).toMatchObject({ code, type: catalogue[code].type, request_id: res.headers.get('request-id') });
  expect(typeof res.body.error.message).toBe('string');
  if (param === undefined) expect(res.body.error).not.toHaveProperty('param');
  else expect(res.body.error.param).toEqual(param);
}

/** 400 validation_error naming `param`. */
export const expectValidationError = (res: Reply, param: string): void => expectError(res, 400, 'validation_error', param);

type GraphQLReply = Reply<{ data?: object | null; errors?: { extensions?: Record<string, unknown> }[] }>;

/** A GraphQL answer that failed: one error carrying the catalogue code (and `param` when given), no value for any field asked. */
export function expectGraphQLError(res: GraphQLReply, code: ErrorCode, param?: string): void {
  for (const [field, value] of Object.entries(res.body.data ?? {})) expect(value, field).toBeNull();
  expect(res.body.errors, res.text).toHaveLength(1);
  expect(res.body.errors![0].extensions).toMatchObject({ code, ...(param !== undefined ? { param } : {}) });
}

/** A GraphQL request refused before execution: the HTTP status, no data, one error with the code and the request id. */
export function expectGraphQLRefusal(res: GraphQLReply, status: number, code: ErrorCode): void {
  expect(res.status).toBe(status);
  expect(res.body.data ?? null).toBeNull();
  expectGraphQLError(res, code);
  expect(res.headers.get('request-id')).toMatch(/^req_/);
  expect(res.body.errors![0].extensions!.request_id).toBe(res.headers.get('request-id'));
}

/** Fails unless every table dbState tracks is exactly as it was (nothing inserted, updated or deleted). */
export async function expectUnchanged(app: TestApp, before: DbState): Promise<void> {
  expect(await dbState(app)).toEqual(before);
}

/** V3 timestamps are Unix seconds; tests write the instants they set as ISO strings. */
export const unix = (iso: string): number => Math.floor(new Date(iso).getTime() / 1000);
