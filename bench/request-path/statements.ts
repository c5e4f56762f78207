import { randomBytes } from 'node:crypto';
import type { StatementProxy } from './statement-proxy.ts';
import type { BenchSeed } from './seed.ts';
import { sleep } from './processes.ts';

// SQL statements per request, counted at the wire (statement-proxy.ts) for a server process of
// its own, one request at a time. Each kind is sent once to warm up (caches, prepared plans),
// then three times: the median is reported, so a background statement (a sweep timer) that
// happens to fall into one window does not count.

export interface StatementCount {
  request: string;
  statements: number;
  /** The three measured counts, when they differ. */
  spread: number[];
  /** The SQL of the median run, for --verbose. */
  sql: string[];
  /** null: no goal for this request; otherwise the most statements the issue allows. */
  goal: number | null;
}

interface Probe {
  request: string;
  goal: number | null;
  send(base: string): Promise<boolean>;
}

const V3 = '/v3/api/business/reseller';
const PASSES = (first: number, fields = 'id name price') => `{ passes(first: ${first}) { edges { node { ${fields} } } } }`;
const ISSUE = `mutation Issue($input: IssuePassInput!) {
  issuePass(input: $input) { __typename ... on IssuedPassPayload { issuedPass { id passcode } } }
}`;

const newKey = () => `bench-${randomBytes(8).toString('hex')}`;
const client = () => ({ first_name: 'Ada', last_name: 'Lovelace', email: `ada+${randomBytes(4).toString('hex')}@example.com` });

function probes(seed: BenchSeed): Probe[] {
  const auth = { Authorization: `Bearer ${seed.apiKey}` };
  const json = { ...auth, 'Content-Type': 'application/json' };
  const graphql = async (base: string, query: string, variables: object, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { ...json, ...headers },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
    return res.status === 200 && !body.errors ? body.data : undefined;
  };
  const rest = async (base: string, path: string, init: RequestInit = {}, status = 200) => {
    const res = await fetch(`${base}${V3}${path}`, { ...init, headers: { ...json, ...((init.headers as Record<string, string>) ?? {}) } });
    await res.text();
    return res.status === status;
  };
  const edges = (data: Record<string, unknown> | undefined) => (data?.passes as { edges: unknown[] } | undefined)?.edges.length;
  const issueRest = (passId: string) => (base: string) =>
    rest(
      base,
      '/issued_passes',
      {
        method: 'POST',
        headers: { 'Idempotency-Key': newKey() },
        body: JSON.stringify({ pass_id: passId, ...client() }),
      },
      201,
    );
  const issueGraphQL = (passId: string) => async (base: string) => {
    const c = client();
    const data = await graphql(
      base,
      ISSUE,
      { input: { passId, firstName: c.first_name, lastName: c.last_name, email: c.email } },
      { 'Idempotency-Key': newKey() },
    );
    return (data?.issuePass as { __typename?: string } | undefined)?.__typename === 'IssuedPassPayload';
  };
  return [
    {
      request: 'GraphQL `{ __typename }` (with the API key)',
      goal: 0,
      send: async (b) => (await graphql(b, '{ __typename }', {}))?.__typename === 'Query',
    },
    { request: 'GET /passes?limit=10', goal: 1, send: (b) => rest(b, '/passes?limit=10') },
    { request: 'GET /passes?limit=100 (20 rows)', goal: 1, send: (b) => rest(b, '/passes?limit=100') },
    {
      request: 'GraphQL `passes(first: 10) { id name price }`',
      goal: 1,
      send: async (b) => edges(await graphql(b, PASSES(10), {})) === 10,
    },
    {
      request: 'GraphQL `passes(first: 100) { id name price }` (20 rows)',
      goal: 1,
      send: async (b) => edges(await graphql(b, PASSES(100), {})) === 20,
    },
    {
      request: 'GraphQL `passes(first: 100) { … providerCount }` (20 rows)',
      goal: null,
      send: async (b) => edges(await graphql(b, PASSES(100, 'id name price providerCount'), {})) === 20,
    },
    { request: 'POST /issued_passes, PAYG (Idempotency-Key)', goal: 10, send: issueRest(seed.paygPassId) },
    { request: 'POST /issued_passes, PREPAID + spa credits (Idempotency-Key)', goal: 10, send: issueRest(seed.prepaidPassId) },
    { request: 'GraphQL `issuePass`, PAYG (Idempotency-Key)', goal: 10, send: issueGraphQL(seed.paygPassId) },
    { request: 'GraphQL `issuePass`, PREPAID + spa credits (Idempotency-Key)', goal: 10, send: issueGraphQL(seed.prepaidPassId) },
  ];
}

export async function countStatements(base: string, proxy: StatementProxy, seed: BenchSeed): Promise<StatementCount[]> {
  const counts: StatementCount[] = [];
  for (const probe of probes(seed)) {
    const runs: string[][] = [];
    for (let i = 0; i < 4; i++) {
      await sleep(50); // let anything the previous request left running finish outside the window
      const from = proxy.statements.length;
      if (!(await probe.send(base))) throw new Error(`statement count: ${probe.request} did not succeed`);
      await sleep(50);
      if (i > 0) runs.push(proxy.statements.slice(from));
    }
    const sorted = [...runs].sort((a, b) => a.length - b.length);
    const median = sorted[1];
    const lengths = runs.map((r) => r.length);
    counts.push({
      request: probe.request,
      statements: median.length,
      goal: probe.goal,
      sql: median,
      spread: new Set(lengths).size > 1 ? lengths : [],
    });
  }
  return counts;
}

/** A few issued passes, so the database holds what a reseller's would (made over HTTP, as a reseller does). */
export async function issueSomePasses(base: string, seed: BenchSeed, count: number): Promise<void> {
  const send = probes(seed).find((p) => p.request.startsWith('POST /issued_passes, PAYG'))!.send;
  for (let i = 0; i < count; i++) if (!(await send(base))) throw new Error('issuing a seed pass failed');
}
