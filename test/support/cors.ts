import { expect } from 'vitest';
import type { TestApp } from './app.ts';

// CORS on /graphql (src/graphql/cors.ts, docs/partner-guide.md "Calling from a browser"): what a
// browser would send, and what it needs to read the answer.

/** The Access-Control-* headers of an answer, by name. */
export const corsHeaders = (res: { headers: Headers }): Record<string, string> =>
  Object.fromEntries([...res.headers.entries()].filter(([name]) => name.startsWith('access-control-')));

/** A browser's preflight of a POST with the token and JSON, from `origin`, to `path` (/graphql unless named). */
export async function preflight(app: Pick<TestApp, 'baseUrl'>, origin: string, path = '/graphql'): Promise<Response> {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
  });
  await res.arrayBuffer();
  return res;
}

/**
 * An actual request's answer that a page on `origin` may read: its origin echoed (never `*`),
 * no credentials (the token is a header, not a cookie), the limits and the request id readable.
 */
export function expectCorsAllowed(res: { headers: Headers }, origin: string): void {
  expect(corsHeaders(res)).toEqual({
    'access-control-allow-origin': origin,
    'access-control-expose-headers': 'Request-Id, RateLimit, RateLimit-Policy, Retry-After',
  });
  expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
}

/** No Access-Control-* header at all: a page on another origin can read nothing. */
export function expectNoCors(res: { headers: Headers }): void {
  expect(corsHeaders(res)).toEqual({});
}
