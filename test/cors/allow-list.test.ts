import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller, type TestReseller } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { runCli } from '../ops/processes.ts';

// A reseller's CORS allow-list for /graphql (docs/partner-guide.md "Calling from a browser"): one
// use case behind REST (GET/PUT /cors_origins), GraphQL (corsOrigins, setCorsOrigins) and the
// operator CLI (`resellers origins`); exact origins, lower-cased, https (http for localhost only),
// at most 20; a bad one is 400 validation_error naming it, and nothing is written.
const app = useApp();

const put = (r: TestReseller, origins: unknown) => v3(app, '/cors_origins', { method: 'PUT', key: r.key, body: { origins } });
const listed = async (r: TestReseller) => (await v3(app, '/cors_origins', { key: r.key })).body.origins as string[];
const stored = async (resellerId: string) =>
  (await app.sql<{ origin: string }>('select origin from reseller_cors_origin where reseller_id = ? order by origin', [resellerId])).map(
    (r) => r.origin,
  );

const SET = `mutation Set($origins: [String!]!) {
  setCorsOrigins(input: { origins: $origins }) {
    __typename
    ... on CorsOrigins { origins }
    ... on Error { code }
    ... on InputError { param }
  }
}`;

describe('REST /cors_origins', () => {
  it('a new reseller lists none; PUT replaces the list, lower-cased, without default ports, each once, in order', async () => {
    const r = await createReseller(app);
    const empty = await v3(app, '/cors_origins', { key: r.key });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ object: 'cors_origins', origins: [] });
    const set = await put(r, [
      'HTTPS://App.Example',
      'https://app.example:443',
      'http://localhost:5173',
      'https://b.example:8443',
      'http://127.0.0.1',
    ]);
    expect(set.status).toBe(200);
    const want = ['http://127.0.0.1', 'http://localhost:5173', 'https://app.example', 'https://b.example:8443'];
    expect(set.body).toEqual({ object: 'cors_origins', origins: want });
    expect(await listed(r)).toEqual(want);
    expect(await stored(r.id)).toEqual(want);
    // Replaced, not merged; an empty list allows no origin.
    expect((await put(r, ['https://c.example'])).body.origins).toEqual(['https://c.example']);
    expect((await put(r, [])).body.origins).toEqual([]);
    expect(await stored(r.id)).toEqual([]);
  });

  it('each reseller reads and sets its own list only', async () => {
    const [a, b] = [await createReseller(app), await createReseller(app)];
    await put(a, ['https://a.example']);
    await put(b, ['https://b.example']);
    expect(await listed(a)).toEqual(['https://a.example']);
    expect(await listed(b)).toEqual(['https://b.example']);
  });

  it.each([
    ['https://*.example', 'origins.0'],
    ['*', 'origins.0'],
    ['https://app.example/', 'origins.0'],
    ['https://app.example/path', 'origins.0'],
    ['https://app.example?x=1', 'origins.0'],
    ['https://app.example#top', 'origins.0'],
    ['http://app.example', 'origins.0'],
    ['ftp://app.example', 'origins.0'],
    ['app.example', 'origins.0'],
    ['https://user@app.example', 'origins.0'],
    ['https://app.example:99999', 'origins.0'],
    ['https://app.example:0', 'origins.0'],
    [' https://app.example', 'origins.0'],
    ['null', 'origins.0'],
    ['', 'origins.0'],
  ])('%j › 400 validation_error on %s; the stored list is unchanged', async (origin, param) => {
    const r = await createReseller(app);
    await put(r, ['https://kept.example']);
    const res = await put(r, [origin]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param });
    expect(await stored(r.id)).toEqual(['https://kept.example']);
  });

  it('a bad origin after good ones, more than 20, or no list › 400 naming it; nothing written', async () => {
    const r = await createReseller(app);
    await put(r, ['https://kept.example']);
    const second = await put(r, ['https://ok.example', 'https://bad.example/path']);
    expect(second.body.error).toMatchObject({ code: 'validation_error', param: 'origins.1' });
    const many = await put(
      r,
      Array.from({ length: 21 }, (_, i) => `https://app${i}.example`),
    );
    expect(many.status).toBe(400);
    expect(many.body.error).toMatchObject({ code: 'validation_error', param: 'origins' });
    for (const body of [{ origins: 'https://a.example' }, {}, { origins: [1] }]) {
      const res = await v3(app, '/cors_origins', { method: 'PUT', key: r.key, body });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toMatch(/^origins/);
    }
    expect(await stored(r.id)).toEqual(['https://kept.example']);
    // Twenty is the limit, not one less.
    const twenty = await put(
      r,
      Array.from({ length: 20 }, (_, i) => `https://app${i}.example`),
    );
    expect(twenty.status).toBe(200);
    expect(twenty.body.origins).toHaveLength(20);
  });
});

describe('GraphQL corsOrigins and setCorsOrigins', () => {
  it('sets and reads the same list as REST; a bad origin is an InputError and writes nothing', async () => {
    const r = await createReseller(app);
    const set = await gql(app, r.key, SET, { origins: ['https://App.Example', 'http://localhost:3000'] });
    expect(set.body.data!.setCorsOrigins).toEqual({ __typename: 'CorsOrigins', origins: ['http://localhost:3000', 'https://app.example'] });
    expect(await listed(r)).toEqual(['http://localhost:3000', 'https://app.example']);
    const read = await gql(app, r.key, '{ corsOrigins { origins } }');
    expect(read.body.data).toEqual({ corsOrigins: { origins: ['http://localhost:3000', 'https://app.example'] } });
    const bad = await gql(app, r.key, SET, { origins: ['https://ok.example', 'http://evil.example'] });
    expect(bad.body.data!.setCorsOrigins).toMatchObject({ __typename: 'InputError', code: 'validation_error', param: 'origins.1' });
    expect(await stored(r.id)).toEqual(['http://localhost:3000', 'https://app.example']);
  });
});

describe('the operator CLI: resellers origins', () => {
  it('--add and --remove change the list the API reads; a bad origin exits non-zero and writes nothing', async () => {
    const r = await createReseller(app);
    const env = { DATABASE_URL: app.databaseUrl };
    const added = await runCli(['resellers', 'origins', r.id, '--add', 'https://a.example,HTTPS://B.example'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({ id: r.id, cors_origins: ['https://a.example', 'https://b.example'] });
    const removed = await runCli(['resellers', 'origins', r.id, '--remove', 'https://a.example', '--add', 'http://localhost:8080'], env);
    expect(JSON.parse(removed.stdout)).toEqual({ id: r.id, cors_origins: ['http://localhost:8080', 'https://b.example'] });
    expect(await listed(r)).toEqual(['http://localhost:8080', 'https://b.example']);
    const bad = await runCli(['resellers', 'origins', r.id, '--add', 'https://c.example,http://evil.example'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/validation_error: .*\(add\.1\)/);
    const shown = await runCli(['resellers', 'origins', r.id], env);
    expect(JSON.parse(shown.stdout)).toEqual({ id: r.id, cors_origins: ['http://localhost:8080', 'https://b.example'] });
    // Four CLI processes, each starting Node and the ORM: on two cores loaded by the rest of the
    // suite that takes longer than the default timeout allows, as for the other process-starting tests.
  }, 90_000);
});
