import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { clientBody, createPassPackage, createReseller } from '../support/factories.ts';
import { call, gql, v3 } from '../support/http.ts';
import { createClassCategory } from '../support/catalog.ts';

// One text rule for every string input on both surfaces (docs/errors.md, "Text input"): valid
// Unicode without NUL, else 400 validation_error naming the input, and nothing is written.
const app = useApp();

async function setup() {
  const reseller = await createReseller(app, { balance: 100_000 });
  const pass = await createPassPackage(app, reseller);
  return { reseller, pass };
}
const clients = async () => Number((await app.sql<{ n: string }>('select count(*) as n from client'))[0].n);

describe('REST query parameters', () => {
  for (const [what, query, param] of [
    ['a NUL', 'category=a%00', 'category'],
    ['invalid UTF-8', 'category=%FF', 'category'],
    ['an encoded lone surrogate', 'category=%ED%A0%80', 'category'],
    ['a NUL in a parameter name', 'categ%00ory=yoga', 'query'],
  ] as const) {
    it(`${what} (GET /classes?${query}) › 400 validation_error on ${param}`, async () => {
      const { reseller } = await setup();
      const res = await v3(app, `/classes?${query}`, { key: reseller.key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', param });
    });
  }

  it('plain UTF-8 text (a category named Yóga 🧘) › accepted and matched', async () => {
    const { reseller } = await setup();
    const name = `Yóga 🧘 ${Math.random().toString(36).slice(2, 8)}`;
    await createClassCategory(app, { name });
    const res = await v3(app, `/classes?category=${encodeURIComponent(name)}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});

describe('REST JSON bodies', () => {
  it('a lone surrogate escape in a field › 400 on that field, no client stored', async () => {
    const { reseller, pass } = await setup();
    const raw = JSON.stringify(clientBody(pass.id)).replace('"Ada"', '"Ad\\ud800a"');
    const res = await v3(app, '/issued_passes', { key: reseller.key, raw, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'first_name' });
    expect(await clients()).toBe(0);
  });

  it('invalid UTF-8 bytes › 400 on body, never stored as U+FFFD', async () => {
    const { reseller, pass } = await setup();
    const json = Buffer.from(JSON.stringify(clientBody(pass.id)).replace('Lovelace', 'Love__lace'));
    json[json.indexOf('__')] = 0xff;
    json[json.indexOf('_', json.indexOf('Love'))] = 0xfe;
    const res = await v3(app, '/issued_passes', {
      key: reseller.key,
      raw: new Uint8Array(json),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'body' });
    expect(await app.sql("select id from client where last_name like '%\uFFFD%'")).toEqual([]);
    expect(await clients()).toBe(0);
  });

  it('a NUL in a nested field name › 400 naming it', async () => {
    const { reseller, pass } = await setup();
    const res = await v3(app, '/issued_passes', { key: reseller.key, body: { ...clientBody(pass.id), 'x\u0000': 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param: 'x\u0000' });
  });
});

describe('GraphQL', () => {
  const ISSUE = 'mutation($input: IssuePassInput!) { issuePass(input: $input) { __typename } }';

  it('a lone surrogate in a variable › 400 validation_error naming it, nothing written', async () => {
    const { reseller, pass } = await setup();
    const res = await gql(app, reseller.key, ISSUE, {
      input: { passId: pass.id, firstName: 'A\ud800', lastName: 'B', email: 'a@example.com' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions).toMatchObject({
      code: 'validation_error',
      type: 'invalid_request_error',
      param: 'variables.input.firstName',
    });
    expect(await clients()).toBe(0);
  });

  it('a NUL spelled in a string literal › 400 naming the argument path, nothing written', async () => {
    const { reseller, pass } = await setup();
    const doc = `mutation { issuePass(input: { passId: "${pass.id}", firstName: "A\\u0000", lastName: "B", email: "a@example.com" }) { __typename } }`;
    const res = await gql(app, reseller.key, doc);
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'input.firstName' });
    expect(await clients()).toBe(0);
  });

  it('the classes category argument with a NUL (literal and variable) › 400, never a 500', async () => {
    const { reseller } = await setup();
    const literal = await gql(app, reseller.key, '{ classes(category: "a\\u0000") { edges { node { id } } } }');
    expect(literal.status).toBe(400);
    expect(literal.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'category' });
    const variable = await gql(app, reseller.key, 'query($c: String) { classes(category: $c) { edges { node { id } } } }', {
      c: 'a\u0000',
    });
    expect(variable.status).toBe(400);
    expect(variable.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'variables.c' });
  });

  it('invalid UTF-8 in a JSON body and bad percent-encoding in a GET query › 400, not U+FFFD', async () => {
    const { reseller } = await setup();
    const bytes = Buffer.from(JSON.stringify({ query: '{ classes(category: "zz") { edges { node { id } } } }' }));
    bytes[bytes.indexOf('zz')] = 0xc3;
    const post = await call(app, '/graphql', {
      method: 'POST',
      raw: new Uint8Array(bytes),
      key: reseller.key,
      headers: { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json' },
    });
    expect(post.status).toBe(400);
    expect(post.body.errors[0].extensions).toMatchObject({ code: 'validation_error', param: 'body' });
    const get = await call(app, `/graphql?query=${encodeURIComponent('{ __typename }')}%FF`, {
      key: reseller.key,
      headers: { Accept: 'application/graphql-response+json' },
    });
    expect(get.status).toBe(400);
    expect(get.body.errors[0].extensions).toMatchObject({ code: 'validation_error', param: 'query' });
  });
});

describe('transport errors (Node refuses to parse the request)', () => {
  function rawRequest(text: string): Promise<string> {
    const url = new URL(app.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(text));
      let answer = '';
      socket.on('data', (d) => {
        answer += d.toString('utf8');
      });
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }
  const parse = (answer: string) => {
    const [head, body] = answer.split('\r\n\r\n');
    return { statusLine: head.split('\r\n')[0], head, body: JSON.parse(body) as { error: Record<string, string> } };
  };

  it('a header larger than Node accepts › 431 in the error envelope with a Request-Id', async () => {
    const answer = parse(await rawRequest(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(answer.statusLine).toMatch(/^HTTP\/1\.1 431 /);
    const requestId = /\r\nRequest-Id: (req_\w+)/i.exec(answer.head)?.[1];
    expect(requestId).toMatch(/^req_/);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', request_id: requestId });
  });

  it('a malformed request line › 400 in the error envelope with a Request-Id', async () => {
    const answer = parse(await rawRequest('NOT A REQUEST\r\n\r\n'));
    expect(answer.statusLine).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.head).toMatch(/\r\nRequest-Id: req_/i);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error' });
  });
});

describe('a wrong method on a known path', () => {
  it('PUT /passes › 405 method_not_allowed with Allow: GET', async () => {
    const { reseller } = await setup();
    const res = await v3(app, '/passes', { key: reseller.key, method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
  });

  it('GET /issued_passes (only POST) › 405 with Allow: POST', async () => {
    const { reseller } = await setup();
    const res = await v3(app, '/issued_passes', { key: reseller.key });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});
