import fc from 'fast-check';
import {
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlSchema } from '../../src/graphql/schema.ts';
import { catalogue } from '../../src/platform/errors.ts';
import { providerApi, resellerApi } from '../../src/rest/router.ts';
import type { Route } from '../../src/rest/route.ts';
import { useApp } from '../support/app.ts';
import { providerKey } from '../support/access-codes.ts';
import { anotherClient, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { call, type Reply } from '../support/http.ts';

// Every REST body and query string and the variables of every GraphQL root field, fuzzed with
// fast-check (docs/errors.md): no answer is a 5xx, every error carries a catalogue code (a 400
// validation_error names its `param`), and a write that answered 4xx changed nothing. The routes
// and fields come from the route tables and the schema, so a new one is fuzzed without a line here.
const app = useApp();
let w: BookingWorld;
let other: TestReseller;
let pk: string;
/** Real ids of both resellers' resources: a share of the inputs reaches past validation. */
let ids: string[] = [];

// 45 inputs a route or field: about 4,300 requests in all, as many as the hostile probe sent (FUZZ_RUNS for more).
const RUNS = Number(process.env.FUZZ_RUNS ?? 45);
const CODES = new Set(Object.keys(catalogue));

beforeAll(async () => {
  w = await createBookingWorld(app);
  other = await createReseller(app);
  pk = await providerKey(app, w.gym.id);
  const second = await anotherClient(app, w, 'fuzz@example.com');
  const instance = await instanceIn(app, w.gym.classId, 30);
  ids = [
    w.passId,
    w.client.id,
    w.client.issuedPassId,
    w.spa.id,
    w.spa.massage,
    w.copaySpa.id,
    w.gym.id,
    w.gym.classId,
    w.copayGym.optionId,
    w.categoryId,
    second.id,
    instance.id,
    other.id,
  ];
  // Whatever else exists (bookings, sessions, codes …) is there to be named too.
  for (const table of ['booking', 'booking_session', 'access_code', 'credit_package', 'webhook_endpoint', 'lookup', 'hosted_session']) {
    for (const row of await app.sql<{ id: string }>(`select id from ${table} limit 3`)) ids.push(row.id);
  }
}, 120_000);

// ---- what a hostile client sends ---------------------------------------------------------------

const edgeStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF',
  'é',
  '😀',
  '\u202Egnp.exe',
  "' OR 1=1--",
  '"; drop table client; --',
  '%00',
  '../../etc/passwd',
  'x'.repeat(10_000),
  'null',
  'undefined',
  '0',
  '-1',
  '1e309',
  'NaN',
  '2027-02-30',
  '2027-13-01',
  '25:61',
  'sk_x',
  'lkpt_x',
);
const edgeNumbers = fc.constantFrom(0, -1, 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, -(2 ** 53), 1.5, 1e308, -0, 4_102_444_800, 253_402_300_800);
const anId = fc.constantFrom(...Array.from({ length: 40 }, (_, i) => i)).map((i) => ids[i % ids.length]!);
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: edgeStrings },
  { weight: 2, arbitrary: edgeNumbers },
  { weight: 2, arbitrary: anId },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { a: { b: { c: [] } } }) },
);

/** A body for a route: its own fields with hostile values, an extra field, or any JSON at all. */
function bodyFor(route: Route): fc.Arbitrary<unknown> {
  const shape = (route.body as { shape?: Record<string, unknown> } | undefined)?.shape;
  if (!shape) return fc.oneof(fc.constant(undefined), anyJson);
  const fields = Object.fromEntries(Object.keys(shape).map((k) => [k, anyJson]));
  return fc.oneof(
    { weight: 4, arbitrary: fc.record(fields, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.record({ ...fields, [`extra_${Object.keys(shape).length}`]: anyJson }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: anyJson },
  );
}

/** Percent-encoding that also sends a lone surrogate, as the bytes of one (ED A0 80: not UTF-8). */
const encode = (v: string): string => [...v].map((c) => (/[\uD800-\uDFFF]/.test(c) ? '%ED%A0%80' : encodeURIComponent(c))).join('');

/** A query string: the route's own parameters and others, repeated, or percent-garbage. */
function queryFor(route: Route): fc.Arbitrary<string> {
  const names = [...Object.keys((route.query as { shape?: object } | undefined)?.shape ?? {}), 'limit', 'starting_after', 'x'];
  const value = fc.oneof(edgeStrings, edgeNumbers.map(String), anId, fc.string());
  const pair = fc.tuple(fc.constantFrom(...names), value).map(([k, v]) => `${encode(k)}=${encode(v)}`);
  return fc.oneof(
    { weight: 4, arbitrary: fc.array(pair, { maxLength: 4 }).map((p) => (p.length ? `?${p.join('&')}` : '')) },
    { weight: 1, arbitrary: fc.constantFrom('?%', '?%zz=1', '?a=%E0%A4%A', '?limit=1&limit=2', '?%00=1', '?&&=&') },
  );
}

const pathFor = (route: Route): fc.Arbitrary<string> => {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const part = fc
    .oneof(
      anId,
      edgeStrings.filter((s) => s.length < 200),
      fc.string({ maxLength: 30 }),
    )
    .map(encode);
  return fc.tuple(...names.map(() => part)).map((values) => {
    let path = route.path;
    names.forEach((name, i) => {
      path = path.replace(`{${name}}`, values[i] ?? '');
    });
    return path;
  });
};

// ---- what must hold --------------------------------------------------------------------------

/** Every table's contents in one digest: a 4xx write must leave it as it was. */
let digestSql: string | undefined;
async function digest(): Promise<string> {
  if (!digestSql) {
    const tables = await app.sql<{ t: string }>(`select table_name as t from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not in ('mikro_orm_migrations', 'instance_secret') order by 1`);
    digestSql = `select md5(concat(${tables.map(({ t }) => `(select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from ${t} x)`).join(', ')})) as d`;
  }
  return (await app.sql<{ d: string }>(digestSql))[0]!.d;
}

function expectCatalogued(what: string, res: Reply): void {
  expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status < 400) return;
  const error = res.body?.error;
  expect(error, `${what}: an error envelope, got ${res.text.slice(0, 300)}`).toBeDefined();
  expect(CODES.has(error.code), `${what}: code ${error.code} is in docs/errors.md`).toBe(true);
  if (error.code === 'validation_error') expect(error.param, `${what}: validation_error names its param`).toEqual(expect.any(String));
}

/** Answers whose change of state the rules allow: a wrong lookup code uses an attempt (docs/partner-guide.md "Lookup"). */
const CHANGES_BY_DESIGN = new Set(['invalid_lookup_code']);

async function sendRest(base: string, key: string, route: Route, path: string, query: string, body: unknown): Promise<void> {
  const what = `${route.method} ${base}${path}${query} ${JSON.stringify(body)?.slice(0, 200)}`;
  const writes = route.method !== 'GET';
  const before = writes ? await digest() : undefined;
  const res = await call(app, `${base}${path}${query}`, {
    method: route.method,
    key,
    ...(body === undefined ? {} : { raw: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
  expectCatalogued(what, res);
  if (writes && res.status >= 400 && !CHANGES_BY_DESIGN.has(res.body?.error?.code)) {
    expect(await digest(), `${what}: a ${res.status} wrote nothing`).toBe(before);
  }
}

describe('REST: every route, hostile bodies and query strings', () => {
  for (const [table, keyOf] of [
    [resellerApi, () => w.reseller.key],
    [providerApi, () => pk],
  ] as const) {
    for (const route of table.routes) {
      it(`${route.method} ${table.base}${route.path}`, async () => {
        await fc.assert(
          fc.asyncProperty(pathFor(route), queryFor(route), bodyFor(route), (path, query, body) =>
            sendRest(table.base, keyOf(), route, path, query, route.method === 'GET' ? undefined : body),
          ),
          { numRuns: RUNS },
        );
      }, 120_000);
    }
  }
});

// ---- GraphQL ---------------------------------------------------------------------------------

/** A value for a GraphQL input type: mostly of its shape, with hostile leaves; sometimes anything. */
function valueFor(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type))
    return fc.oneof({ weight: 9, arbitrary: valueFor(type.ofType, depth) }, { weight: 1, arbitrary: fc.constant(null) });
  const inner: fc.Arbitrary<unknown> = isListType(type)
    ? fc.array(valueFor(type.ofType, depth + 1), { maxLength: 3 })
    : isInputObjectType(type) && depth < 3
      ? fc.record(Object.fromEntries(Object.values(type.getFields()).map((f) => [f.name, valueFor(f.type, depth + 1)])), {
          requiredKeys: [],
        })
      : isEnumType(type)
        ? fc.oneof(fc.constantFrom(...type.getValues().map((v) => v.name)), edgeStrings)
        : isScalarType(type) && ['Int', 'Float'].includes(type.name)
          ? edgeNumbers
          : fc.oneof(anId, edgeStrings, fc.string({ maxLength: 20 }));
  return fc.oneof({ weight: 6, arbitrary: inner }, { weight: 1, arbitrary: anyJson });
}

function operationOf(schema: GraphQLSchema, kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a: GraphQLArgument) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const named = getNamedType(field.type);
  // A result union with error members (docs/errors.md "GraphQL") says which code it answered.
  const errors =
    isUnionType(named) && named.getTypes().some((t) => t.getInterfaces().some((i) => i.name === 'Error')) ? ' ... on Error { code }' : '';
  const selection = isCompositeType(named) ? ` { __typename${errors} }` : '';
  return `${kind}${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
}

describe('GraphQL: every root field, hostile variables', () => {
  const schema = graphqlSchema();
  for (const kind of ['query', 'mutation'] as const) {
    const root = kind === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
    for (const field of Object.values(root.getFields()).filter((f) => f.args.length > 0)) {
      it(`${kind} ${field.name}`, async () => {
        const document = operationOf(schema, kind, field);
        const variables = fc.record(Object.fromEntries(field.args.map((a) => [a.name, valueFor(a.type)])), { requiredKeys: [] });
        await fc.assert(
          fc.asyncProperty(variables, async (vars) => {
            const before = kind === 'mutation' ? await digest() : undefined;
            const res = await call(app, '/graphql', {
              key: w.reseller.key,
              body: { query: document, variables: vars },
              headers: { Accept: 'application/graphql-response+json' },
            });
            const what = `${document} ${JSON.stringify(vars).slice(0, 300)}`;
            expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
            for (const error of res.body?.errors ?? []) {
              expect(CODES.has(error.extensions?.code), `${what}: ${JSON.stringify(error).slice(0, 300)}`).toBe(true);
            }
            // A mutation answered by an error (top-level, or its result union's error member) wrote nothing.
            const result = res.body?.data?.[field.name] as { __typename?: string; code?: string } | undefined;
            if (result?.code !== undefined) expect(CODES.has(result.code), `${what}: ${result.code} is in docs/errors.md`).toBe(true);
            const failed = res.body?.errors?.length || result?.__typename?.endsWith('Error');
            if (before !== undefined && failed && !CHANGES_BY_DESIGN.has(result?.code ?? '')) {
              expect(await digest(), `${what}: an error wrote nothing`).toBe(before);
            }
          }),
          { numRuns: RUNS },
        );
      }, 120_000);
    }
  }
});
