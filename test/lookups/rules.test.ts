import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { anotherClient } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { createPassPackage, createReseller, issuePass } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import { codeIn, useLookupWorld, deliverMail, setLookup, startLookup, type LookupWorld, type TestSmtp } from '../support/lookups.ts';

// docs/partner-guide.md "Lookup": who can be looked up (nothing told apart), bad input, the rate limit, the code's
// 15 minutes and 5 attempts (also under concurrent verifies), and who sees a lookup.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: LookupWorld;
let smtp: TestSmtp;
useLookupWorld(app, (world, server) => {
  w = world;
  smtp = server;
});

const start = (body: unknown, key = w.requester.key) => v3(app, '/lookups', { key, body });
const verify = (id: string, body: unknown, key = w.requester.key) => v3(app, `/lookups/${id}/verify`, { key, body });
const attempts = async (id: string) =>
  (await app.sql<{ attempts_remaining: number; status: string }>('select attempts_remaining, status from lookup where id = ?', [id]))[0];
/** The code mailed for the latest lookup (delivered now). */
async function mailedCode(): Promise<string> {
  const before = smtp.received.length;
  await deliverMail(app, { SMTP_URL: smtp.url });
  return codeIn(smtp.received[before]);
}

describe('POST /lookups › who can be looked up', () => {
  it('not an issuer (lookup off, unknown, malformed) › 404 on issuer_id; not its client, unknown, or without an active pass › the same 404 on client_id; nothing written', async () => {
    const quiet = await createReseller(app, { name: 'Quiet' });
    const pass = await createPassPackage(app, quiet);
    const quietClient = await issuePass(app, quiet, pass.id);
    const noPass = await anotherClient(app, w, 'nopass@example.com');
    await app.sql(`update issued_pass set status = 'CANCELLED' where id = ?`, [noPass.issuedPassId]);
    const expired = await anotherClient(app, w, 'expired@example.com');
    await app.sql(`update issued_pass set expires_at = ? where id = ?`, [new Date('2026-03-01T00:00:00Z'), expired.issuedPassId]);

    const before = await dbState(app);
    for (const issuer of [quiet.id, 'res_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'nonsense']) {
      const res = await start({ issuer_id: issuer, client_id: w.client.id });
      expectError(res, 404, 'resource_not_found', 'issuer_id');
      expect(res.body.error.message).toBe(`No such issuer: '${issuer}'`);
    }
    for (const client of [quietClient.client_id, 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ', noPass.id, expired.id]) {
      const res = await start({ issuer_id: w.issuer.id, client_id: client });
      expectError(res, 404, 'resource_not_found', 'client_id');
      expect(res.body.error.message).toBe(`No such client: '${client}'`);
    }
    await expectUnchanged(app, before);
  });

  it('bad input › 400 naming the field, nothing written; GraphQL the same as InputError', async () => {
    const before = await dbState(app);
    expectValidationError(await start({ client_id: w.client.id }), 'issuer_id');
    expectValidationError(await start({ issuer_id: w.issuer.id }), 'client_id');
    expectValidationError(await start({ issuer_id: w.issuer.id, client_id: 7 }), 'client_id');
    expectValidationError(await start({ issuer_id: w.issuer.id, client_id: w.client.id, email: 'ada@example.com' }), 'email');
    expectValidationError(await start({ issuer_id: '\u0000', client_id: w.client.id }), 'issuer_id');
    expectValidationError(await v3(app, '/settings/lookup', { key: w.requester.key, body: { enabled: 'yes' } }), 'enabled');
    expectValidationError(await v3(app, '/settings/lookup', { key: w.requester.key, body: {} }), 'enabled');
    const g = await gql(
      app,
      w.requester.key,
      'mutation { startLookup(input: { issuerId: "", clientId: "x" }) { __typename ... on InputError { code param } } }',
    );
    expect(g.body.data.startLookup).toEqual({ __typename: 'InputError', code: 'validation_error', param: 'issuerId' });
    await expectUnchanged(app, before);
  });
});

describe('POST /lookups › at most 5 a client an hour, whoever asks', () => {
  it('the 6th › 429 rate_limited with Retry-After until the first leaves the hour; other clients are not held back', async () => {
    const client = await anotherClient(app, w, 'popular@example.com');
    const other = await createReseller(app);
    for (let i = 0; i < 5; i++) {
      await startLookup(app, i % 2 ? other : w.requester, w.issuer.id, client.id);
      app.clock.advance(5 * 60_000);
    }
    // 25 minutes after the first: it leaves the hour in 35.
    const before = await dbState(app);
    const limited = await start({ issuer_id: w.issuer.id, client_id: client.id }, other.key);
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe(String(35 * 60));
    await expectUnchanged(app, before);
    const g = await gql(
      app,
      w.requester.key,
      `mutation { startLookup(input: { issuerId: "${w.issuer.id}", clientId: "${client.id}" }) { __typename ... on Error { code } } }`,
    );
    expect(g.body.data.startLookup).toEqual({ __typename: 'InputError', code: 'rate_limited' });
    await startLookup(app, w.requester, w.issuer.id, w.client.id);
    app.clock.advance(35 * 60_000);
    await startLookup(app, w.requester, w.issuer.id, client.id);
  });

  it('8 starts at once for one client › exactly 5 × 201 and 3 × 429', async () => {
    const client = await anotherClient(app, w, 'rush@example.com');
    const replies = await Promise.all(Array.from({ length: 8 }, () => start({ issuer_id: w.issuer.id, client_id: client.id })));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    expect((await app.sql<{ n: string }>('select count(*) as n from lookup where client_id = ?', [client.id]))[0].n).toBe('5');
  });
});

describe('POST /lookups/{id}/verify › the code', () => {
  it('5 wrong codes › attempts 4 … 0, then FAILED; any further code, the right one too › 409 lookup_not_pending', async () => {
    const client = await anotherClient(app, w, 'wrong@example.com');
    const lookup = await startLookup(app, w.requester, w.issuer.id, client.id);
    const code = await mailedCode();
    const wrong = code === '123456' ? '654321' : '123456';
    for (let left = 4; left >= 0; left--) {
      const res = await verify(lookup.id, { access_code: wrong });
      expectError(res, 400, 'invalid_lookup_code', 'access_code');
      expect(res.body.error.message).toContain(`attempts_remaining: ${left}`);
      expect(await attempts(lookup.id)).toEqual({ attempts_remaining: left, status: left ? 'PENDING' : 'FAILED' });
    }
    expectError(await verify(lookup.id, { access_code: code }), 409, 'lookup_not_pending');
    expect((await v3(app, `/lookups/${lookup.id}`, { key: w.requester.key })).body).toMatchObject({
      status: 'FAILED',
      attempts_remaining: 0,
      token_expires_at: null,
    });
  });

  it('10 wrong codes at once › exactly 5 × 400 and 5 × 409 (the row lock holds the attempts)', async () => {
    const client = await anotherClient(app, w, 'race@example.com');
    const lookup = await startLookup(app, w.requester, w.issuer.id, client.id);
    const code = await mailedCode();
    const wrong = code === '000000' ? '999999' : '000000';
    const replies = await Promise.all(Array.from({ length: 10 }, () => verify(lookup.id, { access_code: wrong })));
    expect(replies.map((r) => `${r.status} ${r.body.error.code}`).sort()).toEqual([
      ...Array(5).fill('400 invalid_lookup_code'),
      ...Array(5).fill('409 lookup_not_pending'),
    ]);
    expect(await attempts(lookup.id)).toEqual({ attempts_remaining: 0, status: 'FAILED' });
  });

  it('a malformed code › 400 validation_error on access_code, no attempt used', async () => {
    const client = await anotherClient(app, w, 'malformed@example.com');
    const lookup = await startLookup(app, w.requester, w.issuer.id, client.id);
    const before = await dbState(app);
    for (const body of [{ access_code: '12345' }, { access_code: '1234567' }, { access_code: 123456 }, { access_code: '12 456' }, {}]) {
      expectValidationError(await verify(lookup.id, body), 'access_code');
    }
    expectValidationError(await verify(lookup.id, { access_code: '123456', token: 'x' }), 'token');
    await expectUnchanged(app, before);
  });

  it('after 15 minutes › 422 lookup_expired, the lookup reads EXPIRED, nothing written', async () => {
    const client = await anotherClient(app, w, 'late@example.com');
    const lookup = await startLookup(app, w.requester, w.issuer.id, client.id);
    const code = await mailedCode();
    app.clock.advance(15 * 60_000);
    const before = await dbState(app);
    expectError(await verify(lookup.id, { access_code: code }), 422, 'lookup_expired');
    await expectUnchanged(app, before);
    expect((await v3(app, `/lookups/${lookup.id}`, { key: w.requester.key })).body.status).toBe('EXPIRED');
  });
});

describe('who sees a lookup', () => {
  it('another reseller, the issuer included › 404 on read and verify, and its attempts are untouched; GraphQL lookup(id:) null', async () => {
    const client = await anotherClient(app, w, 'private@example.com');
    const lookup = await startLookup(app, w.requester, w.issuer.id, client.id);
    const code = await mailedCode();
    const stranger = await createReseller(app);
    for (const key of [stranger.key, w.issuer.key]) {
      expectError(await v3(app, `/lookups/${lookup.id}`, { key }), 404, 'resource_not_found');
      expectError(await verify(lookup.id, { access_code: code }, key), 404, 'resource_not_found');
      const g = await gql(app, key, `{ lookup(id: "${lookup.id}") { id } }`);
      expect(g.body).toEqual({ data: { lookup: null } });
    }
    expect(await attempts(lookup.id)).toEqual({ attempts_remaining: 5, status: 'PENDING' });
    for (const id of ['lookup_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'nonsense']) {
      expectError(await v3(app, `/lookups/${id}`, { key: w.requester.key }), 404, 'resource_not_found');
    }
    // Its requester verifies it.
    expect((await verify(lookup.id, { access_code: code })).status).toBe(200);
  });

  it('a reseller may look up its own client when it has lookup enabled', async () => {
    const pass = await createPassPackage(app, w.requester);
    const own = await issuePass(app, w.requester, pass.id, { email: 'mine@example.com' });
    expectError(await start({ issuer_id: w.requester.id, client_id: own.client_id }), 404, 'resource_not_found', 'issuer_id');
    await setLookup(app, w.requester, true);
    try {
      await startLookup(app, w.requester, w.requester.id, own.client_id);
    } finally {
      await setLookup(app, w.requester, false);
    }
  });
});
