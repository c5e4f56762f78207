import type { TestApp } from './app.ts';
import { checkDocumentedResponse } from '../contract/response-schemas.ts';

export const V3 = '/v3/api/business/reseller';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Call {
  method?: string;
  key?: string;
  body?: unknown;
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

/** A real HTTP request to the app; JSON in, JSON out. */
export async function call<T = any>(app: TestApp, path: string, opts: Call = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey;
  let body: string | Uint8Array | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(`${app.baseUrl}${path}`, { method: methodOf(opts), headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

const methodOf = (opts: Call) => opts.method ?? (opts.body !== undefined || opts.raw !== undefined ? 'POST' : 'GET');

/**
 * A V3 REST call (path under /v3/api/business/reseller). Every response is held to docs/openapi.json
 * (test/contract/response-schemas.ts): an undocumented status or field fails the calling test.
 */
export async function v3<T = any>(app: TestApp, path: string, opts: Call = {}): Promise<Reply<T>> {
  const reply = await call<T>(app, `${V3}${path}`, opts);
  checkDocumentedResponse(methodOf(opts), `${V3}${path}`, reply);
  return reply;
}

/** A GraphQL operation over POST /graphql. */
export function gql<T = any>(
  app: TestApp,
  key: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
  extra: Omit<Call, 'body' | 'key'> = {},
) {
  return call<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>(app, '/graphql', {
    ...extra,
    key,
    body: { query, variables },
    headers: { Accept: 'application/graphql-response+json', ...(extra.headers ?? {}) },
  });
}
