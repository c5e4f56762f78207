import { beforeAll, describe, expect, it } from 'vitest';
import { providerKey } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectError, expectGraphQLRefusal, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { issuePass } from '../support/factories.ts';
import { call, gql, V3 } from '../support/http.ts';
import { createHostedSession, getPage, h1, hostedSessionCount, openSession, secretOf, sha256 } from '../support/hosted-sessions.ts';

// POST /hosted_sessions and createHostedSession (docs/partner-guide.md "Hosted sessions"): the session and its URL
// for one client of the reseller with an ACTIVE pass, every field checked (a 400 naming it, nothing
// written), the URL's secret answered once and kept only as its SHA-256, idempotent replays, and
// the URL's base (PUBLIC_BASE_URL, else the request's Host).

const NOW = new Date('2026-03-02T08:00:00Z');
const app = useApp({}, { now: NOW });
const publicApp = useApp({ PUBLIC_BASE_URL: 'https://pay.example.com' }, { now: NOW });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

const RETURN = 'https://shop.example.com/back?order=42';
const valid = () => ({ client_id: w.client.id, mode: 'booking', return_url: RETURN });
const SECRET_URL = /^hss_[0-9A-Za-z]{40}$/;

/** Every row of every table of the app's database, as text. */
async function everyRow(): Promise<string> {
  const tables = await app.sql<{ tablename: string }>("select tablename from pg_tables where schemaname = 'public'");
  const texts = await Promise.all(
    tables.map(async ({ tablename }) =>
      (await app.sql<{ row: string }>(`select t::text as row from "${tablename}" t`)).map((r) => r.row).join('\n'),
    ),
  );
  return texts.join('\n');
}

describe('POST /hosted_sessions › created', () => {
  it('answers the hosted_session with its URL on the request’s host, OPEN, expiring in 24 hours by default', async () => {
    const before = await hostedSessionCount(app);
    const res = await createHostedSession(app, w, valid());
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'access_code_id',
      'allow_copay',
      'booking_id',
      'client_id',
      'completed_at',
      'created',
      'expires_at',
      'id',
      'max_copay_amount',
      'mode',
      'object',
      'return_url',
      'status',
      'url',
    ]);
    expect(res.body).toEqual({
      object: 'hosted_session',
      id: expect.stringMatching(/^hs_[0-9A-Z]{26}$/),
      client_id: w.client.id,
      mode: 'booking',
      status: 'OPEN',
      url: expect.any(String),
      return_url: RETURN,
      allow_copay: false,
      max_copay_amount: null,
      expires_at: unix('2026-03-03T08:00:00Z'),
      completed_at: null,
      booking_id: null,
      access_code_id: null,
      created: unix('2026-03-02T08:00:00Z'),
    });
    // Without PUBLIC_BASE_URL the URL is on the Host the request was sent to.
    expect(res.body.url.startsWith(`${app.baseUrl}/hosted/`), res.body.url).toBe(true);
    expect(secretOf(res.body.url)).toMatch(SECRET_URL);
    expect(await hostedSessionCount(app)).toBe(before + 1);
    const [row] = await app.sql<Record<string, unknown>>('select * from hosted_session where id = ?', [res.body.id]);
    expect(row).toMatchObject({ client_id: w.client.id, reseller_id: w.reseller.id, mode: 'booking', status: 'OPEN', return_url: RETURN });
  });

  it('takes every option: allow_copay with max_copay_amount, expires_in from 300 to 86400 seconds', async () => {
    const res = await createHostedSession(app, w, {
      ...valid(),
      mode: 'access_code',
      allow_copay: true,
      max_copay_amount: 3000,
      expires_in: 300,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      mode: 'access_code',
      allow_copay: true,
      max_copay_amount: 3000,
      expires_at: unix('2026-03-02T08:05:00Z'),
      status: 'OPEN',
    });
    const longest = await createHostedSession(app, w, { ...valid(), allow_copay: true, max_copay_amount: 0, expires_in: 86400 });
    expect(longest.status, longest.text).toBe(201);
    expect(longest.body).toMatchObject({ allow_copay: true, max_copay_amount: 0, expires_at: unix('2026-03-03T08:00:00Z') });
    const copayAnyAmount = await createHostedSession(app, w, { ...valid(), allow_copay: true });
    expect(copayAnyAmount.body).toMatchObject({ allow_copay: true, max_copay_amount: null });
    const explicitNo = await createHostedSession(app, w, { ...valid(), allow_copay: false });
    expect(explicitNo.body).toMatchObject({ allow_copay: false, max_copay_amount: null });
  });

  it('a return_url of exactly 2000 characters, and a plain http one, are taken as they are', async () => {
    const base = 'https://shop.example.com/back?x=';
    const long = base + 'a'.repeat(2000 - base.length);
    const res = await createHostedSession(app, w, { ...valid(), return_url: long });
    expect(res.status, res.text).toBe(201);
    expect(res.body.return_url).toBe(long);
    const http = await createHostedSession(app, w, { ...valid(), return_url: 'http://127.0.0.1:8080/done' });
    expect(http.status, http.text).toBe(201);
    expect(http.body.return_url).toBe('http://127.0.0.1:8080/done');
  });

  it('each session has its own secret; the URL opens its page without an API key', async () => {
    const a = await openSession(app, w, { client_id: w.client.id });
    const b = await openSession(app, w, { client_id: w.client.id });
    expect(a.secret).not.toBe(b.secret);
    expect(a.id).not.toBe(b.id);
    const page = await getPage(app, a.url);
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(h1(page)).toBe('Book with your pass');
  });
});

describe('POST /hosted_sessions › the secret at rest', () => {
  it('only its SHA-256 is stored: no column of the row and no stored idempotent answer holds the secret', async () => {
    const res = await createHostedSession(app, w, valid(), 'hs-at-rest');
    expect(res.status, res.text).toBe(201);
    const secret = secretOf(res.body.url);
    const [row] = await app.sql<Record<string, unknown>>('select * from hosted_session where id = ?', [res.body.id]);
    expect(row.secret_hash).toBe(sha256(secret));
    const rowText = JSON.stringify(row);
    expect(rowText).not.toContain(secret);
    expect(rowText).not.toContain(secret.slice(4));

    // The idempotency record keeps the answer sealed (docs/operator-guide.md "Secrets at rest"): not the secret.
    const columns = await app.sql<{ column_name: string }>(
      "select column_name from information_schema.columns where table_name = 'idempotency_record' order by ordinal_position",
    );
    expect(columns.map((c) => c.column_name)).toEqual(expect.arrayContaining(['key', 'response_body']));
    const records = await app.sql<{ r: string }>('select row_to_json(i)::text as r from idempotency_record i');
    expect(records.length).toBeGreaterThan(0);
    expect(records.some((r) => r.r.includes('hs-at-rest'))).toBe(true);
    for (const { r } of records) {
      expect(r).not.toContain(secret);
      expect(r).not.toContain(secret.slice(4));
    }
    // Nor any other row of the database (the outbox, events, logs of requests).
    const all = await everyRow();
    expect(all).not.toContain(secret.slice(4));
  });
});

describe('POST /hosted_sessions › Idempotency-Key', () => {
  it('the same key and body answer the identical response, the same URL, with X-Idempotent-Replayed; one session only', async () => {
    const before = await hostedSessionCount(app);
    const first = await createHostedSession(app, w, valid(), 'hs-replay-1');
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('x-idempotent-replayed')).toBeNull();
    const again = await createHostedSession(app, w, valid(), 'hs-replay-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('x-idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.body.url).toBe(first.body.url);
    expect(await hostedSessionCount(app)).toBe(before + 1);
    // The replayed URL still opens the page.
    expect((await getPage(app, again.body.url)).status).toBe(200);
  });

  it('the same key with another body › 409 idempotency_key_reused, nothing written', async () => {
    expect((await createHostedSession(app, w, valid(), 'hs-replay-2')).status).toBe(201);
    const before = await dbState(app);
    expectError(await createHostedSession(app, w, { ...valid(), mode: 'access_code' }, 'hs-replay-2'), 409, 'idempotency_key_reused');
    await expectUnchanged(app, before);
  });
});

describe('POST /hosted_sessions › validation', () => {
  const base = () => valid() as Record<string, unknown>;
  const without = (field: string) => {
    const b = base();
    delete b[field];
    return b;
  };
  const cases: [string, () => unknown, string][] = [
    ['no client_id', () => without('client_id'), 'client_id'],
    ['client_id not a string', () => ({ ...base(), client_id: 42 }), 'client_id'],
    ['client_id empty', () => ({ ...base(), client_id: '' }), 'client_id'],
    ['no mode', () => without('mode'), 'mode'],
    ['an unknown mode', () => ({ ...base(), mode: 'spa' }), 'mode'],
    ['mode not a string', () => ({ ...base(), mode: true }), 'mode'],
    ['no return_url', () => without('return_url'), 'return_url'],
    ['a relative return_url', () => ({ ...base(), return_url: '/back' }), 'return_url'],
    ['a return_url that is no URL', () => ({ ...base(), return_url: 'not a url' }), 'return_url'],
    ['an ftp return_url', () => ({ ...base(), return_url: 'ftp://shop.example.com/back' }), 'return_url'],
    ['a javascript: return_url', () => ({ ...base(), return_url: 'javascript:alert(1)' }), 'return_url'],
    ['a data: return_url', () => ({ ...base(), return_url: 'data:text/html,hi' }), 'return_url'],
    [
      'a return_url of 2001 characters',
      () => ({ ...base(), return_url: `https://shop.example.com/${'a'.repeat(2001 - 25)}` }),
      'return_url',
    ],
    ['return_url not a string', () => ({ ...base(), return_url: 7 }), 'return_url'],
    ['allow_copay not a boolean', () => ({ ...base(), allow_copay: 'yes' }), 'allow_copay'],
    ['max_copay_amount without allow_copay', () => ({ ...base(), max_copay_amount: 1000 }), 'max_copay_amount'],
    ['max_copay_amount with allow_copay false', () => ({ ...base(), allow_copay: false, max_copay_amount: 1000 }), 'max_copay_amount'],
    ['a negative max_copay_amount', () => ({ ...base(), allow_copay: true, max_copay_amount: -1 }), 'max_copay_amount'],
    ['a fractional max_copay_amount', () => ({ ...base(), allow_copay: true, max_copay_amount: 10.5 }), 'max_copay_amount'],
    ['max_copay_amount as a string', () => ({ ...base(), allow_copay: true, max_copay_amount: '1000' }), 'max_copay_amount'],
    ['expires_in below 300', () => ({ ...base(), expires_in: 299 }), 'expires_in'],
    ['expires_in above 86400', () => ({ ...base(), expires_in: 86401 }), 'expires_in'],
    ['a fractional expires_in', () => ({ ...base(), expires_in: 600.5 }), 'expires_in'],
    ['expires_in as a string', () => ({ ...base(), expires_in: '600' }), 'expires_in'],
    ['an unknown field', () => ({ ...base(), colour: 'red' }), 'colour'],
  ];
  for (const [title, body, param] of cases) {
    it(`${title} › 400 on ${param}, nothing written`, async () => {
      const before = await dbState(app);
      const count = await hostedSessionCount(app);
      expectValidationError(await createHostedSession(app, w, body()), param);
      await expectUnchanged(app, before);
      expect(await hostedSessionCount(app)).toBe(count);
    });
  }

  it('a body that is not a JSON object › 400, nothing written', async () => {
    const count = await hostedSessionCount(app);
    for (const raw of ['[]', '"booking"', '{"client_id":']) {
      const res = await call(app, `${V3}/hosted_sessions`, { key: w.reseller.key, raw, headers: { 'Content-Type': 'application/json' } });
      expect(res.status, `${raw}: ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    expect(await hostedSessionCount(app)).toBe(count);
  });
});

describe('POST /hosted_sessions › who', () => {
  it('an unknown client or another reseller’s › 404 resource_not_found; nothing written', async () => {
    const other = await createBookingWorld(app);
    const before = await dbState(app);
    const count = await hostedSessionCount(app);
    expectError(
      await createHostedSession(app, w, { ...valid(), client_id: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      404,
      'resource_not_found',
      'client_id',
    );
    expectError(await createHostedSession(app, w, { ...valid(), client_id: other.client.id }), 404, 'resource_not_found', 'client_id');
    await expectUnchanged(app, before);
    expect(await hostedSessionCount(app)).toBe(count);
  });

  it('a client whose pass is expired or cancelled › 409 pass_not_active; nothing written', async () => {
    const expired = await anotherClient(app, w, 'expired.hosted@example.com');
    await app.sql('update issued_pass set expires_at = ? where id = ?', [new Date('2026-03-01T00:00:00Z'), expired.issuedPassId]);
    const cancelled = await issuePass(app, w.reseller, w.passId, { email: 'cancelled.hosted@example.com' });
    await app.sql("update issued_pass set status = 'CANCELLED' where id = ?", [cancelled.id]);
    const before = await dbState(app);
    const count = await hostedSessionCount(app);
    expectError(await createHostedSession(app, w, { ...valid(), client_id: expired.id }), 409, 'pass_not_active');
    expectError(
      await createHostedSession(app, w, { ...valid(), client_id: cancelled.client_id, mode: 'access_code' }),
      409,
      'pass_not_active',
    );
    await expectUnchanged(app, before);
    expect(await hostedSessionCount(app)).toBe(count);
  });

  it('no API key › 401 invalid_api_key; a provider key › 403 permission_denied; nothing written', async () => {
    const count = await hostedSessionCount(app);
    expectError(await call(app, `${V3}/hosted_sessions`, { body: valid() }), 401, 'invalid_api_key');
    expectError(
      await call(app, `${V3}/hosted_sessions`, { key: await providerKey(app, w.gym.id), body: valid() }),
      403,
      'permission_denied',
    );
    expect(await hostedSessionCount(app)).toBe(count);
  });
});

describe('POST /hosted_sessions › PUBLIC_BASE_URL', () => {
  it('the URL is on PUBLIC_BASE_URL when it is set, whatever the Host', async () => {
    const world = await createBookingWorld(publicApp);
    const res = await createHostedSession(publicApp, world, { client_id: world.client.id, mode: 'access_code', return_url: RETURN });
    expect(res.status, res.text).toBe(201);
    expect(res.body.url).toMatch(/^https:\/\/pay\.example\.com\/hosted\/hss_[0-9A-Za-z]{40}$/);
    // The page itself is served by this server at the same path.
    const page = await getPage(publicApp, new URL(res.body.url).pathname);
    expect(page.status).toBe(200);
    expect(h1(page)).toBe('Get your access code');
  });
});

describe('createHostedSession (GraphQL)', () => {
  const CREATE = `mutation Create($input: CreateHostedSessionInput!) {
    createHostedSession(input: $input) {
      __typename
      ... on HostedSessionCreation { url hostedSession { id status mode client { id } returnUrl expiresAt } }
      ... on Error { code message }
      ... on InputError { param }
      ... on NotFoundError { param }
    }
  }`;
  async function create(input: Record<string, unknown>, idempotencyKey?: string) {
    const res = await gql(app, w.reseller.key, CREATE, { input }, idempotencyKey ? { idempotencyKey } : {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.errors, res.text).toBeUndefined();
    return { res, payload: res.body.data!.createHostedSession };
  }

  it('creates the session: HostedSessionCreation with its URL and the session', async () => {
    const count = await hostedSessionCount(app);
    const { payload } = await create({
      clientId: w.client.id,
      mode: 'BOOKING',
      returnUrl: RETURN,
      allowCopay: true,
      maxCopayAmount: 2500,
      expiresIn: 600,
    });
    expect(payload).toEqual({
      __typename: 'HostedSessionCreation',
      url: expect.stringMatching(/\/hosted\/hss_[0-9A-Za-z]{40}$/),
      hostedSession: {
        id: expect.stringMatching(/^hs_/),
        status: 'OPEN',
        mode: 'BOOKING',
        client: { id: w.client.id },
        returnUrl: RETURN,
        expiresAt: '2026-03-02T08:10:00Z',
      },
    });
    expect(payload.url.startsWith(`${app.baseUrl}/hosted/`)).toBe(true);
    expect(await hostedSessionCount(app)).toBe(count + 1);
    const [row] = await app.sql<{ secret_hash: string; allow_copay: boolean; max_copay_amount: number }>(
      'select secret_hash, allow_copay, max_copay_amount from hosted_session where id = ?',
      [payload.hostedSession.id],
    );
    expect(row).toEqual({ secret_hash: sha256(secretOf(payload.url)), allow_copay: true, max_copay_amount: 2500 });
    const page = await getPage(app, payload.url);
    expect(h1(page)).toBe('Book with your pass');

    const code = await create({ clientId: w.client.id, mode: 'ACCESS_CODE', returnUrl: RETURN });
    expect(code.payload).toMatchObject({
      __typename: 'HostedSessionCreation',
      hostedSession: { mode: 'ACCESS_CODE', expiresAt: '2026-03-03T08:00:00Z' },
    });
  });

  it('the same Idempotency-Key answers the same URL once more; one session', async () => {
    const count = await hostedSessionCount(app);
    const input = { clientId: w.client.id, mode: 'ACCESS_CODE', returnUrl: RETURN };
    const first = await create(input, 'gql-hs-1');
    const again = await create(input, 'gql-hs-1');
    expect(again.res.headers.get('x-idempotent-replayed')).toBe('true');
    expect(again.payload).toEqual(first.payload);
    expect(await hostedSessionCount(app)).toBe(count + 1);
  });

  it('invalid input › InputError naming the GraphQL field; unknown client › NotFoundError; no pass › ConflictError; nothing written', async () => {
    const expired = await anotherClient(app, w, 'expired.gql.hosted@example.com');
    await app.sql('update issued_pass set expires_at = ? where id = ?', [new Date('2026-03-01T00:00:00Z'), expired.issuedPassId]);
    const before = await dbState(app);
    const count = await hostedSessionCount(app);
    expect((await create({ clientId: w.client.id, mode: 'BOOKING', returnUrl: 'ftp://x.example.com' })).payload).toMatchObject({
      __typename: 'InputError',
      code: 'validation_error',
      param: 'returnUrl',
    });
    expect((await create({ clientId: w.client.id, mode: 'BOOKING', returnUrl: RETURN, maxCopayAmount: 100 })).payload).toMatchObject({
      __typename: 'InputError',
      code: 'validation_error',
      param: 'maxCopayAmount',
    });
    expect((await create({ clientId: w.client.id, mode: 'BOOKING', returnUrl: RETURN, expiresIn: 60 })).payload).toMatchObject({
      __typename: 'InputError',
      code: 'validation_error',
      param: 'expiresIn',
    });
    expect((await create({ clientId: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ', mode: 'BOOKING', returnUrl: RETURN })).payload).toMatchObject({
      __typename: 'NotFoundError',
      code: 'resource_not_found',
      param: 'clientId',
    });
    expect((await create({ clientId: expired.id, mode: 'BOOKING', returnUrl: RETURN })).payload).toMatchObject({
      __typename: 'ConflictError',
      code: 'pass_not_active',
    });
    await expectUnchanged(app, before);
    expect(await hostedSessionCount(app)).toBe(count);
  });

  it('an unknown mode is a refused document; no key › 401', async () => {
    const count = await hostedSessionCount(app);
    const res = await gql(app, w.reseller.key, CREATE, { input: { clientId: w.client.id, mode: 'SPA', returnUrl: RETURN } });
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', type: 'invalid_request_error' });
    expectGraphQLRefusal(
      await gql(app, undefined, CREATE, { input: { clientId: w.client.id, mode: 'BOOKING', returnUrl: RETURN } }),
      401,
      'invalid_api_key',
    );
    expect(await hostedSessionCount(app)).toBe(count);
  });
});
