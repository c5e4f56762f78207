import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';
import { call } from '../support/http.ts';

// Every body format POST /graphql accepts goes through the same idempotency path, decided from
// what yoga parsed (docs/errors.md, "Idempotency"): a retry in another format is a replay, never a
// second execution. The types a browser sends from any site without a CORS preflight (a form,
// multipart, text/plain) are refused before authentication, so nothing in them runs (CSRF).
const app = useApp();

const mutation = (passId: string) =>
  `mutation { issuePass(input: { passId: "${passId}", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }) { __typename ... on IssuedPassPayload { issuedPass { id } } } }`;

async function prepaid() {
  const reseller = await createReseller(app, { balance: 100_000 });
  const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 10_000 });
  return { reseller, pass };
}

function post(key: string, idempotencyKey: string | undefined, contentType: string, body: string) {
  return call(app, '/graphql', {
    method: 'POST',
    raw: body,
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': contentType,
      Accept: 'application/graphql-response+json',
      ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
    },
  });
}

const asJson = (query: string) => ['application/json', JSON.stringify({ query })] as const;
const asGraphQLJson = (query: string) => ['application/graphql+json', JSON.stringify({ query })] as const;
const asGraphQL = (query: string) => ['application/graphql', query] as const;
const asForm = (query: string) => ['application/x-www-form-urlencoded', new URLSearchParams({ query }).toString()] as const;
const asText = (query: string) => ['text/plain', JSON.stringify({ query })] as const;
const boundary = 'gateway-test-boundary';
const asMultipart = (query: string) =>
  [
    `multipart/form-data; boundary=${boundary}`,
    [
      `--${boundary}`,
      'Content-Disposition: form-data; name="query"',
      '',
      query,
      `--${boundary}`,
      'Content-Disposition: form-data; name="operations"',
      '',
      JSON.stringify({ query }),
      `--${boundary}--`,
      '',
    ].join('\r\n'),
  ] as const;

async function effects(resellerId: string) {
  const [row] = await app.sql<{ clients: string; debits: string; balance: string }>(
    `select (select count(*) from client where reseller_id = ?) as clients,
            (select count(*) from business_transaction where reseller_id = ? and type = 'DEBIT') as debits,
            (select balance from business_account where reseller_id = ?) as balance`,
    [resellerId, resellerId, resellerId],
  );
  return { clients: Number(row.clients), debits: Number(row.debits), balance: Number(row.balance) };
}

describe('POST /graphql mutations with an Idempotency-Key', () => {
  for (const [name, format] of [
    ['application/graphql+json', asGraphQLJson],
    ['application/graphql', asGraphQL],
    ['JSON', asJson],
  ] as const) {
    it(`sent ${name} twice › executes once; the retry is a byte-identical replay`, async () => {
      const { reseller, pass } = await prepaid();
      const [type, body] = format(mutation(pass.id));
      const first = await post(reseller.key, `fmt-${name}`, type, body);
      expect(first.status).toBe(200);
      expect(first.body.data.issuePass.__typename).toBe('IssuedPassPayload');
      const retry = await post(reseller.key, `fmt-${name}`, type, body);
      expect(retry.headers.get('x-idempotent-replayed')).toBe('true');
      expect(retry.text).toBe(first.text);
      expect(await effects(reseller.id)).toEqual({ clients: 1, debits: 1, balance: 90_000 });
    });
  }

  it('the same mutation first as JSON, then as application/graphql+json, then as application/graphql › one execution, two replays', async () => {
    const { reseller, pass } = await prepaid();
    const query = mutation(pass.id);
    const first = await post(reseller.key, 'across-formats', ...asJson(query));
    const form = await post(reseller.key, 'across-formats', ...asGraphQLJson(query));
    const plain = await post(reseller.key, 'across-formats', ...asGraphQL(query));
    for (const retry of [form, plain]) {
      expect(retry.headers.get('x-idempotent-replayed')).toBe('true');
      expect(retry.text).toBe(first.text);
    }
    expect(await effects(reseller.id)).toEqual({ clients: 1, debits: 1, balance: 90_000 });
  });

  it('five concurrent application/graphql requests with one key › one client, one debit, five identical bodies', async () => {
    const { reseller, pass } = await prepaid();
    const [type, body] = asGraphQL(mutation(pass.id));
    const replies = await Promise.all(Array.from({ length: 5 }, () => post(reseller.key, 'concurrent-form', type, body)));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(await effects(reseller.id)).toEqual({ clients: 1, debits: 1, balance: 90_000 });
  });

  it('the same key with another mutation in another format › 409 idempotency_key_reused, nothing written', async () => {
    const { reseller, pass } = await prepaid();
    await post(reseller.key, 'reused', ...asJson(mutation(pass.id)));
    const other = await post(reseller.key, 'reused', ...asGraphQL(mutation(pass.id).replace('Ada', 'Grace')));
    expect(other.status).toBe(409);
    expect(other.body.errors[0].extensions).toMatchObject({ code: 'idempotency_key_reused', type: 'idempotency_error' });
    expect(await effects(reseller.id)).toEqual({ clients: 1, debits: 1, balance: 90_000 });
  });

  it('a malformed key on an application/graphql mutation › 400 validation_error on Idempotency-Key, nothing written', async () => {
    const { reseller, pass } = await prepaid();
    const res = await post(reseller.key, 'x'.repeat(256), ...asGraphQL(mutation(pass.id)));
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'validation_error', param: 'Idempotency-Key' });
    expect(await effects(reseller.id)).toEqual({ clients: 0, debits: 0, balance: 100_000 });
  });

  it('an application/graphql mutation without a key › runs in its transaction: a failure leaves nothing behind', async () => {
    const reseller = await createReseller(app, { balance: 5000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 10_000 });
    const res = await post(
      reseller.key,
      undefined,
      ...asGraphQL(mutation(pass.id).replace('__typename', '__typename ... on Error { code }')),
    );
    expect(res.body.data.issuePass).toEqual({ __typename: 'UnprocessableError', code: 'insufficient_balance' });
    expect(await effects(reseller.id)).toEqual({ clients: 0, debits: 0, balance: 5000 });
  });
});

describe('POST /graphql with a body a browser sends from any site without a preflight (CSRF)', () => {
  for (const [name, format] of [
    ['form-encoded', asForm],
    ['multipart/form-data', asMultipart],
    ['text/plain', asText],
  ] as const) {
    it(`${name} › 415 unsupported_media_type before authentication; the mutation in it writes nothing`, async () => {
      const { reseller, pass } = await prepaid();
      const [type, body] = format(mutation(pass.id));
      const res = await post(reseller.key, `csrf-${name}`, type, body);
      expect(res.status).toBe(415);
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'unsupported_media_type', type: 'invalid_request_error' });
      expect(res.body.data).toBeUndefined();
      // Before authentication: no key at all is refused the same way, not 401.
      const anonymous = await call(app, '/graphql', { method: 'POST', raw: body, headers: { 'Content-Type': type } });
      expect(anonymous.status).toBe(415);
      expect(anonymous.body.errors[0].extensions.code).toBe('unsupported_media_type');
      expect(await effects(reseller.id)).toEqual({ clients: 0, debits: 0, balance: 100_000 });
      const [stored] = await app.sql<{ n: string }>('select count(*) as n from idempotency_record where key = ?', [`csrf-${name}`]);
      expect(Number(stored.n)).toBe(0);
    });
  }

  it('a JSON POST, a GET query with Authorization and the GraphiQL page still work', async () => {
    const { reseller } = await prepaid();
    const json = await post(reseller.key, undefined, ...asJson('{ passes(first: 1) { edges { node { id } } } }'));
    expect(json.status).toBe(200);
    expect(json.body.data.passes.edges).toHaveLength(1);
    const get = await call(app, `/graphql?query=${encodeURIComponent('{ passes(first: 1) { edges { node { id } } } }')}`, {
      key: reseller.key,
      headers: { Accept: 'application/graphql-response+json' },
    });
    expect(get.status).toBe(200);
    expect(get.body.data.passes.edges).toHaveLength(1);
    const page = await call(app, '/graphql', { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
  });
});
