import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, unix } from '../support/assertions.ts';
import { instanceIn } from '../support/bookings.ts';
import { lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, createReseller, walletLedger } from '../support/factories.ts';
import { gql, v3 } from '../support/http.ts';
import {
  codeIn,
  useLookupWorld,
  deliverMail,
  gqlWithToken,
  setLookup,
  withToken,
  type LookupWorld,
  type TestSmtp,
} from '../support/lookups.ts';

// docs/partner-guide.md "Lookup": issuers, a lookup started, its code mailed over real SMTP and read back from the
// message, verified, and the token used to book for the client and read it; on REST and GraphQL.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: LookupWorld;
let smtp: TestSmtp;
useLookupWorld(app, (world, server) => {
  w = world;
  smtp = server;
});

const LOOKUP_FIELDS = [
  'attempts_remaining',
  'client_id',
  'created',
  'expires_at',
  'id',
  'issuer_id',
  'object',
  'status',
  'token_expires_at',
];

describe('issuers and the lookup setting', () => {
  it('POST /settings/lookup turns it on and off; GET /issuers lists exactly the resellers with it on, the caller too when it is one', async () => {
    const other = await createReseller(app, { name: 'Quiet Reseller' });
    const list = async () => (await v3(app, '/issuers?limit=100', { key: w.requester.key })).body.data.map((i: { id: string }) => i.id);
    expect(await list()).toContain(w.issuer.id);
    expect(await list()).not.toContain(other.id);
    expect(await list()).not.toContain(w.requester.id);

    const on = await v3(app, '/settings/lookup', { key: w.requester.key, body: { enabled: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.body).toEqual({ object: 'lookup_settings', lookup_enabled: true });
    expect((await v3(app, '/settings/lookup', { key: w.requester.key })).body).toEqual({ object: 'lookup_settings', lookup_enabled: true });
    const issuers = (await v3(app, '/issuers?limit=100', { key: w.requester.key })).body;
    expect(issuers).toMatchObject({ object: 'list', url: '/v3/api/business/reseller/issuers', has_more: false });
    expect(issuers.data).toContainEqual({ object: 'issuer', id: w.issuer.id, name: 'Test Reseller' });
    expect(issuers.data).toContainEqual({ object: 'issuer', id: w.requester.id, name: 'Requesting Reseller' });

    await setLookup(app, w.requester, false);
    expect(await list()).not.toContain(w.requester.id);
    // Paged like every list: one at a time, newest first.
    const first = await v3(app, '/issuers?limit=1', { key: other.key });
    expect(first.body.data).toHaveLength(1);
  });

  it('GraphQL setLookupEnabled, lookupSettings and issuers', async () => {
    const r = await createReseller(app, { name: 'Graph Reseller' });
    const set = await gql(
      app,
      r.key,
      'mutation { setLookupEnabled(enabled: true) { __typename ... on LookupSettings { lookupEnabled } } }',
    );
    expect(set.body).toEqual({ data: { setLookupEnabled: { __typename: 'LookupSettings', lookupEnabled: true } } });
    const read = await gql(app, r.key, '{ lookupSettings { lookupEnabled } issuers(first: 100) { edges { node { id name } } } }');
    expect(read.body.data.lookupSettings).toEqual({ lookupEnabled: true });
    expect(read.body.data.issuers.edges.map((e: { node: unknown }) => e.node)).toContainEqual({ id: r.id, name: 'Graph Reseller' });
    await gql(app, r.key, 'mutation { setLookupEnabled(enabled: false) { __typename } }');
    const after = await gql(app, r.key, '{ issuers(first: 100) { edges { node { id } } } }');
    expect(after.body.data.issuers.edges.map((e: { node: { id: string } }) => e.node.id)).not.toContain(r.id);
  });
});

describe('the lookup flow over REST, with the code from a real e-mail', () => {
  it('start › mail › wrong code › right code › token books a class and reads the client; the requester owns and pays', async () => {
    const outbox = await lastOutboxId(app);
    const started = await v3(app, '/lookups', { key: w.requester.key, body: { issuer_id: w.issuer.id, client_id: w.client.id } });
    expect(started.status, started.text).toBe(201);
    expect(Object.keys(started.body).sort()).toEqual(LOOKUP_FIELDS);
    expect(started.body).toMatchObject({
      object: 'lookup',
      status: 'PENDING',
      issuer_id: w.issuer.id,
      client_id: w.client.id,
      attempts_remaining: 5,
      token_expires_at: null,
      expires_at: unix('2026-03-02T08:15:00Z'),
      created: unix('2026-03-02T08:00:00Z'),
    });
    expect(started.body.id).toMatch(/^lookup_[0-9A-Z]{26}$/);
    // Nothing about the client: no e-mail, no name, masked or not. As words: an id's random letters may spell "ADA".
    expect(started.text).not.toMatch(/\bada\b|lovelace|example\.com|\*\*\*/i);

    // The outbox carries the mail; the SMTP server gets it once.
    const rows = await outboxSince(app, outbox);
    expect(rows.map((r) => r.topic)).toEqual(['mail']);
    expect(Object.keys(rows[0].payload)).toEqual(['mail_message_id']);
    expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
    expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(0);
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail.to).toEqual(['ada@example.com']);
    expect(mail.parsed.subject).toBe('Your code for Requesting Reseller');
    expect(mail.parsed.messageId).toBe(`<outbox-${rows[0].id}.${Date.parse('2026-03-02T08:00:00Z')}@localhost>`);
    expect(mail.parsed.from?.address).toBe('no-reply@localhost');
    const code = codeIn(mail);
    expect(mail.parsed.text).toContain('Requesting Reseller asks to use your wellness pass from Test Reseller');
    expect(mail.parsed.text).toContain('It works for 15 minutes, until 08:15 UTC on 2026-03-02');
    expect(mail.parsed.html).toContain(code);
    expect(mail.parsed.html).toContain('Requesting Reseller');

    // A wrong code uses an attempt (kept: GET shows it) and says how many are left.
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const bad = await v3(app, `/lookups/${started.body.id}/verify`, { key: w.requester.key, body: { access_code: wrong } });
    expectError(bad, 400, 'invalid_lookup_code', 'access_code');
    expect(bad.body.error.message).toContain('attempts_remaining: 4');
    expect((await v3(app, `/lookups/${started.body.id}`, { key: w.requester.key })).body).toMatchObject({
      status: 'PENDING',
      attempts_remaining: 4,
    });

    const verifiedAt = await lastOutboxId(app);
    const verified = await v3(app, `/lookups/${started.body.id}/verify`, { key: w.requester.key, body: { access_code: code } });
    expect(verified.status, verified.text).toBe(200);
    const [pass] = await app.sql<{ expires_at: Date }>('select expires_at from issued_pass where id = ?', [w.client.issuedPassId]);
    expect(verified.body).toMatchObject({
      object: 'lookup',
      id: started.body.id,
      status: 'ACTIVE',
      attempts_remaining: 4,
      token_expires_at: Math.floor(new Date(pass.expires_at).getTime() / 1000),
    });
    const token: string = verified.body.lookup_token;
    expect(token).toMatch(/^lkpt_[0-9A-Za-z]{40}$/);
    // lookup.verified, to the requester, without the token.
    const events = await outboxSince(app, verifiedAt);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([['lookup.verified', w.requester.id]]);
    expect(events[0].payload.data.object).toEqual({ ...verified.body, lookup_token: undefined });
    expect(JSON.stringify(events)).not.toContain(token);
    // Shown once: GET never shows it; a second verify is 409.
    const read = await v3(app, `/lookups/${started.body.id}`, { key: w.requester.key });
    expect(read.body).not.toHaveProperty('lookup_token');
    expect(read.body.status).toBe('ACTIVE');
    expectError(
      await v3(app, `/lookups/${started.body.id}/verify`, { key: w.requester.key, body: { access_code: code } }),
      409,
      'lookup_not_pending',
    );

    // The token alone books a class for the client: a visit of the client's pass, the booking the requester's.
    const instance = await instanceIn(app, w.gym.classId, 50);
    const booked = await v3(app, '/bookings/class', {
      headers: withToken(token),
      body: { class_instance_id: instance.id, client_id: w.client.id },
    });
    expect(booked.status, booked.text).toBe(201);
    expect(booked.body).toMatchObject({ status: 'PENDING', visits_deducted: 1 });
    const [booking] = await app.sql<{ reseller_id: string; client_id: string }>('select reseller_id, client_id from booking where id = ?', [
      booked.body.booking_id,
    ]);
    expect(booking).toEqual({ reseller_id: w.requester.id, client_id: w.client.id });
    const [visits] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [
      w.client.issuedPassId,
    ]);
    expect(visits.visits_used.GYM).toBe(1);
    // The requester reads its booking with its key; the issuer does not see it as its own.
    expect((await v3(app, `/bookings/${booked.body.booking_id}`, { key: w.requester.key })).status).toBe(200);
    expect((await v3(app, `/bookings/${booked.body.booking_id}`, { key: w.issuer.key })).status).toBe(404);

    // The token reads the client, e-mail masked; so does the requester's key alone while the lookup is active.
    for (const opts of [{ headers: withToken(token) }, { key: w.requester.key }, { key: w.requester.key, headers: withToken(token) }]) {
      const client = await v3(app, `/clients/${w.client.id}`, opts);
      expect(client.status, client.text).toBe(200);
      expect(client.body).toMatchObject({
        object: 'client',
        id: w.client.id,
        first_name: 'Ada',
        email: 'a***@example.com',
        external_id: null,
      });
      expect(client.body.active_pass).toMatchObject({ id: w.client.issuedPassId, status: 'ACTIVE' });
    }
    // The issuer reads its own client unmasked.
    expect((await v3(app, `/clients/${w.client.id}`, { key: w.issuer.key })).body.email).toBe('ada@example.com');

    // The client's wallet, as its issuer sees it, to the token and to the requester's key alone.
    const own = await v3(app, `/clients/${w.client.id}/credits`, { key: w.issuer.key });
    expect(own.status, own.text).toBe(200);
    expect(own.body.transactions.length).toBeGreaterThan(0);
    for (const opts of [{ headers: withToken(token) }, { key: w.requester.key }]) {
      const wallet = await v3(app, `/clients/${w.client.id}/credits`, opts);
      expect(wallet.status, wallet.text).toBe(200);
      expect({ ...wallet.body, currency: undefined }).toEqual({ ...own.body, currency: undefined });
    }
    const graph = await gqlWithToken(
      app,
      token,
      `query($id: ID!) { client(id: $id) { credits { balance transactions(first: 5) { edges { node { id } } } } } }`,
      { id: w.client.id },
    );
    expect(graph.body.data.client.credits).toMatchObject({ balance: own.body.balance });
    expect(graph.body.data.client.credits.transactions.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
      own.body.transactions.slice(0, 5).map((t: { id: string }) => t.id),
    );
  });

  it('a co-pay spa session with the token: the requester’s business account pays, the issuer’s is untouched; a covered spa takes the client’s own credits', async () => {
    const { token } = await verifiedToken();
    const issuerBefore = await businessLedger(app, w.issuer.id);
    const requesterBefore = await businessLedger(app, w.requester.id);
    const session = await v3(app, '/bookings/spa', {
      headers: withToken(token),
      body: {
        spa_id: w.copaySpa.id,
        service_ids: [w.copaySpa.sauna],
        date: '2026-03-05',
        time: '10:00',
        user_pass_id: w.client.issuedPassId,
      },
    });
    expect(session.status, session.text).toBe(201);
    expect(session.body).toMatchObject({ copay_required: true, copay_amount: 1500 });
    const confirmed = await v3(app, `/bookings/spa/${session.body.session_id}/confirm`, {
      method: 'POST',
      headers: withToken(token),
      idempotencyKey: 'spa-confirm-1',
    });
    expect(confirmed.status, confirmed.text).toBe(201);
    expect((await businessLedger(app, w.requester.id)).balance).toBe(requesterBefore.balance - 1500);
    expect(await businessLedger(app, w.issuer.id)).toEqual(issuerBefore);
    const [row] = await app.sql<{ reseller_id: string }>('select reseller_id from booking where id = ?', [confirmed.body.id]);
    expect(row.reseller_id).toBe(w.requester.id);

    const wallet = await walletLedger(app, w.client.id);
    const covered = await v3(app, '/bookings/spa', {
      headers: withToken(token),
      body: { spa_id: w.spa.id, service_ids: [w.spa.sauna], date: '2026-03-06', time: '11:00', client_id: w.client.id },
    });
    expect(covered.status, covered.text).toBe(201);
    expect(await walletLedger(app, w.client.id)).toEqual({ balance: wallet.balance - 10, ledgerSum: wallet.ledgerSum - 10 });
    // The requester cancels its booking with its key: the credits go back to the client's own wallet.
    const cancelled = await v3(app, `/bookings/${covered.body.booking_id}/cancel`, { key: w.requester.key, method: 'POST' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await walletLedger(app, w.client.id)).toEqual(wallet);
  });
});

/** A fresh lookup of the world's client by the requester, verified; its token. */
async function verifiedToken(): Promise<{ token: string; lookupId: string }> {
  const started = await v3(app, '/lookups', { key: w.requester.key, body: { issuer_id: w.issuer.id, client_id: w.client.id } });
  expect(started.status, started.text).toBe(201);
  const before = smtp.received.length;
  await deliverMail(app, { SMTP_URL: smtp.url });
  const code = codeIn(smtp.received[before]);
  const verified = await v3(app, `/lookups/${started.body.id}/verify`, { key: w.requester.key, body: { access_code: code } });
  expect(verified.status, verified.text).toBe(200);
  return { token: verified.body.lookup_token, lookupId: started.body.id };
}

describe('the lookup flow over GraphQL', () => {
  it('startLookup › the mailed code › verifyLookup (a wrong code first) › bookClass and client with the token', async () => {
    const other = await createReseller(app, { name: 'Graph Requester', balance: 100_000 });
    const start = await gql(
      app,
      other.key,
      `mutation($input: StartLookupInput!) { startLookup(input: $input) {
      __typename ... on Lookup { id status issuerId clientId attemptsRemaining expiresAt tokenExpiresAt } ... on Error { code message } } }`,
      { input: { issuerId: w.issuer.id, clientId: w.client.id } },
    );
    const lookup = start.body.data.startLookup;
    expect(lookup).toMatchObject({
      __typename: 'Lookup',
      status: 'PENDING',
      issuerId: w.issuer.id,
      clientId: w.client.id,
      attemptsRemaining: 5,
      tokenExpiresAt: null,
    });
    const before = smtp.received.length;
    await deliverMail(app, { SMTP_URL: smtp.url });
    const code = codeIn(smtp.received[before]);
    expect(smtp.received[before].parsed.subject).toBe('Your code for Graph Requester');

    const VERIFY = `mutation($input: VerifyLookupInput!) { verifyLookup(input: $input) {
      __typename ... on LookupVerification { lookupToken lookup { id status attemptsRemaining tokenExpiresAt } }
      ... on Error { code message } ... on InputError { param } } }`;
    const wrong = await gql(app, other.key, VERIFY, {
      input: { lookupId: lookup.id, accessCode: code === '000000' ? '000001' : '000000' },
    });
    expect(wrong.body.data.verifyLookup).toMatchObject({ __typename: 'InputError', code: 'invalid_lookup_code', param: 'accessCode' });
    expect(wrong.body.data.verifyLookup.message).toContain('attempts_remaining: 4');
    const read = await gql(app, other.key, 'query($id: ID!) { lookup(id: $id) { attemptsRemaining status } }', { id: lookup.id });
    expect(read.body.data.lookup).toEqual({ attemptsRemaining: 4, status: 'PENDING' });
    // The token is never stored, so verifyLookup takes no Idempotency-Key.
    const keyed = await gql(app, other.key, VERIFY, { input: { lookupId: lookup.id, accessCode: code } }, { idempotencyKey: 'verify-1' });
    expect(keyed.status).toBe(400);
    expect(keyed.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'Idempotency-Key' });

    const right = await gql(app, other.key, VERIFY, { input: { lookupId: lookup.id, accessCode: code } });
    const verified = right.body.data.verifyLookup;
    expect(verified).toMatchObject({ __typename: 'LookupVerification', lookup: { id: lookup.id, status: 'ACTIVE', attemptsRemaining: 4 } });
    expect(verified.lookupToken).toMatch(/^lkpt_[0-9A-Za-z]{40}$/);
    expect(verified.lookup.tokenExpiresAt).toMatch(/^2026-04-/);

    const instance = await instanceIn(app, w.gym.classId, 80);
    const booked = await gqlWithToken(
      app,
      verified.lookupToken,
      `mutation($input: BookClassInput!) { bookClass(input: $input) {
      __typename ... on ClassBookingInitiation { status booking { id client { id email } } } ... on Error { code message } } }`,
      { input: { classInstanceId: instance.id, clientId: w.client.id } },
    );
    expect(booked.body.errors, booked.text).toBeUndefined();
    expect(booked.body.data.bookClass).toMatchObject({
      __typename: 'ClassBookingInitiation',
      status: 'PENDING',
      booking: { client: { id: w.client.id, email: 'a***@example.com' } },
    });

    const client = await gqlWithToken(app, verified.lookupToken, 'query($id: ID!) { client(id: $id) { id firstName email externalId } }', {
      id: w.client.id,
    });
    expect(client.body).toEqual({ data: { client: { id: w.client.id, firstName: 'Ada', email: 'a***@example.com', externalId: null } } });
    // The key alone reads it too while the lookup is active, masked; the issuer reads it unmasked.
    const byKey = await gql(app, other.key, 'query($id: ID!) { client(id: $id) { email } }', { id: w.client.id });
    expect(byKey.body.data.client).toEqual({ email: 'a***@example.com' });
    const byIssuer = await gql(app, w.issuer.key, 'query($id: ID!) { client(id: $id) { email } }', { id: w.client.id });
    expect(byIssuer.body.data.client).toEqual({ email: 'ada@example.com' });
  });
});
