import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';

// No CORS for any origin (src/graphql/yoga.ts): a browser page on another origin gets no
// Access-Control-* header from a preflight or an answer, so it can neither send the API key
// cross-origin nor read what comes back. Server-to-server calls (the API key's) need no CORS.
const app = useApp();
const ORIGIN = 'https://anything.example';

const corsHeaders = (res: Response) => [...res.headers.keys()].filter((h) => h.startsWith('access-control-'));

describe('CORS', () => {
  it.each(['/graphql', '/v3/api/business/reseller/passes'])('a preflight to %s from another origin gets no CORS headers', async (path) => {
    const res = await fetch(`${app.baseUrl}${path}`, {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
    });
    await res.arrayBuffer();
    expect(res.status).toBeLessThan(500);
    expect(corsHeaders(res)).toEqual([]);
  });

  it('a GraphQL POST and a REST GET with an Origin answer as without one, with no CORS headers', async () => {
    const reseller = await createReseller(app);
    const gql = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { Origin: ORIGIN, Authorization: `Bearer ${reseller.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ passes(first: 1) { edges { node { id } } } }' }),
    });
    expect(gql.status).toBe(200);
    expect(((await gql.json()) as { errors?: unknown }).errors).toBeUndefined();
    expect(corsHeaders(gql)).toEqual([]);
    const rest = await fetch(`${app.baseUrl}/v3/api/business/reseller/passes`, {
      headers: { Origin: ORIGIN, Authorization: `Bearer ${reseller.key}` },
    });
    await rest.arrayBuffer();
    expect(rest.status).toBe(200);
    expect(corsHeaders(rest)).toEqual([]);
  });
});
