import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.ts';
import {
  confirmCode,
  createCode,
  madeCode,
  provider,
  providerKey,
  readmeVerifier,
  scanQr,
  secretsIn,
  type VerificationKey,
} from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { createProvider } from '../support/catalog.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { businessLedger, createPassPackage, issuePass } from '../support/factories.ts';

// POST /access-codes (docs/partner-guide.md "Access codes"): its outcomes (a code now, an extra-visits session, a
// co-pay session, 403), the code's expiry at the end of the provider's local day, the signed QR
// read back as a scanner reads it and verified with the partner guide's recipe, and the code kept as a
// hash only.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
let key: VerificationKey;
beforeAll(async () => {
  w = await createBookingWorld(app);
  key = (await provider(app, '/access-codes/verification-key', { key: await providerKey(app, w.gym.id) })).body;
});

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const gymVisits = async (issuedPassId: string) =>
  (await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [issuedPassId]))[0]
    .visits_used.GYM ?? 0;

/** Uses up a client's GYM visits of March, with the ledger rows that say so. */
async function useUpGymVisits(client: { id: string; issuedPassId: string }, used = 8) {
  await app.sql(`update issued_pass set visits_used = jsonb_build_object('GYM', ?::int), visits_period = '2026-03' where id = ?`, [
    used,
    client.issuedPassId,
  ]);
  await app.sql(
    `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, created_at)
                 values (?, ?, ?, ?, 'GYM', '2026-03', ?, 'BOOKING', ?)`,
    [newId('visitTransaction'), w.reseller.id, client.id, client.issuedPassId, used, app.clock.now()],
  );
}

describe('POST /access-codes › covered: a code now', () => {
  it('answers the access_code with its code and QR, holding one visit of the month, valid to the end of the local day', async () => {
    const client = await anotherClient(app, w, 'covered@example.com');
    const outbox = await lastOutboxId(app);
    const res = await createCode(app, w, { client_id: client.id, provider_id: w.gym.id }, 'code-1');
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body)).toEqual([
      'object',
      'id',
      'code',
      'qr_code',
      'client_id',
      'issued_pass_id',
      'provider_id',
      'status',
      'expires_at',
      'redeemed_at',
      'redeemed_provider_id',
      'created',
    ]);
    expect(res.body).toMatchObject({
      object: 'access_code',
      client_id: client.id,
      issued_pass_id: client.issuedPassId,
      provider_id: w.gym.id,
      status: 'ACTIVE',
      // 09:00 in Berlin (UTC+1): the day ends at midnight there, 23:00 UTC.
      expires_at: unix('2026-03-02T23:00:00Z'),
      redeemed_at: null,
      redeemed_provider_id: null,
      created: unix('2026-03-02T08:00:00Z'),
    });
    expect(res.body.id).toMatch(/^ac_[0-9A-Z]{26}$/);
    expect(res.body.code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/);
    expect(res.body.qr_code).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);

    // One visit taken, in the ledger under the code's id.
    expect(await gymVisits(client.issuedPassId)).toBe(1);
    expect(
      await app.sql('select delta, reason, period, access_code_id, booking_id from visit_transaction where client_id = ?', [client.id]),
    ).toEqual([{ delta: 1, reason: 'ACCESS_CODE', period: '2026-03', access_code_id: res.body.id, booking_id: null }]);

    // The event carries the code without its secret.
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([['access_code.created', w.reseller.id]]);
    const { code: _code, qr_code: _qr, ...withoutSecret } = res.body;
    expect(events[0].payload.data.object).toEqual(withoutSecret);

    // Only the hash is stored: neither the code nor the QR payload is in any column of the row, the
    // outbox, the ledgers or the stored idempotent answer (sealed).
    const [row] = await app.sql<Record<string, unknown>>('select * from access_code where id = ?', [res.body.id]);
    expect(row.code_hash).toBe(sha256(res.body.code));
    const stored = [
      ...(await app.sql('select row_to_json(a)::text as r from access_code a')),
      ...(await app.sql('select payload::text as r from outbox')),
      ...(await app.sql('select row_to_json(t)::text as r from visit_transaction t')),
      ...(await app.sql('select row_to_json(s)::text as r from access_code_session s')),
      ...(await app.sql('select row_to_json(i)::text as r from idempotency_record i')),
    ];
    expect(stored.length).toBeGreaterThan(3);
    const payload = scanQr(res.body.qr_code);
    expect(secretsIn(stored, [res.body.code, payload, payload.split('.')[1], res.body.qr_code.slice(22, 100)])).toEqual([]);
  });

  it('the QR decodes to a signed payload the README recipe verifies with the provider key’s verification key; an altered one fails', async () => {
    const code = await madeCode(app, w, { client_id: w.client.id, provider_id: w.gym.id });
    const text = scanQr(code.qr_code);
    expect(text).toMatch(/^AC1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(key).toEqual({
      object: 'access_code_verification_key',
      kid: expect.stringMatching(/^[0-9a-f]{16}$/),
      algorithm: 'HMAC-SHA256',
      key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });

    const verify = await readmeVerifier();
    const now = app.clock.now().getTime();
    expect(verify(text, key, w.gym.id, now)).toEqual({
      kid: key.kid,
      id: code.id,
      code: code.code,
      client_id: w.client.id,
      provider_id: w.gym.id,
      exp: code.expires_at,
    });
    const [prefix, body, signature] = text.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, provider_id: w.copayGym.id })).toString('base64url');
    for (const altered of [
      `${prefix}.${forged}.${signature}`, // another provider's payload under this signature
      `${prefix}.${body}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BA' : 'AA'}`, // a changed signature
      `AC2.${body}.${signature}`, // another version
      `${prefix}.${body}`, // no signature
    ]) {
      expect(verify(altered, key, w.gym.id, now), altered).toBeNull();
    }
    expect(verify(text, { ...key, key: Buffer.alloc(32, 1).toString('base64url') }, w.gym.id, now), 'another key').toBeNull();
    expect(verify(text, key, w.copayGym.id, now), "another provider's scanner").toBeNull();
    expect(verify(text, key, w.gym.id, code.expires_at * 1000), 'past its day').toBeNull();
  });

  it('pass_code (any case) names the client as client_id does; both must agree', async () => {
    const issued = await issuePass(app, w.reseller, w.passId, { first_name: 'Pat', last_name: 'Code', email: 'passcode@example.com' });
    const res = await createCode(app, w, { pass_code: issued.passcode.toLowerCase(), provider_id: w.gym.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'access_code', client_id: issued.client_id, issued_pass_id: issued.id });
    expect((await createCode(app, w, { pass_code: issued.passcode, client_id: issued.client_id })).status).toBe(201);
    const before = await dbState(app);
    expectValidationError(await createCode(app, w, { pass_code: issued.passcode, client_id: w.client.id }), 'pass_code');
    expectError(await createCode(app, w, { pass_code: 'ZZZZZZZZ' }), 404, 'resource_not_found', 'pass_code');
    await expectUnchanged(app, before);
  });

  it('without provider_id: valid at any gym the pass covers, until the end of the UTC day', async () => {
    const client = await anotherClient(app, w, 'anygym@example.com');
    const code = await madeCode(app, w, { client_id: client.id });
    expect(code).toMatchObject({ provider_id: null, status: 'ACTIVE', expires_at: unix('2026-03-03T00:00:00Z') });
    expect(await gymVisits(client.issuedPassId)).toBe(1);
    const claims = (await readmeVerifier())(scanQr(code.qr_code), key, w.copaySpa.id, app.clock.now().getTime());
    expect(claims).toMatchObject({ id: code.id, provider_id: null });
  });

  it('without provider_id, a pass that covers no gym › 403 provider_not_covered, nothing written', async () => {
    const spaOnly = await createPassPackage(app, w.reseller, {
      categories: [{ type: 'SPA', tiers: ['SILVER'], visits_allowed: null, credit_allocated: 50 }],
    });
    const issued = await issuePass(app, w.reseller, spaOnly.id, { email: 'spaonly@example.com' });
    const before = await dbState(app);
    expectError(await createCode(app, w, { client_id: issued.client_id }), 403, 'provider_not_covered');
    await expectUnchanged(app, before);
    // A spa the pass covers takes a code (a spa visit: unlimited).
    expect((await createCode(app, w, { client_id: issued.client_id, provider_id: w.spa.id })).body).toMatchObject({
      object: 'access_code',
      provider_id: w.spa.id,
    });
  });

  it('a code never outlives the pass', async () => {
    const issued = await issuePass(app, w.reseller, w.passId, { email: 'short@example.com' });
    await app.sql('update issued_pass set expires_at = ? where id = ?', [new Date('2026-03-02T18:00:00Z'), issued.id]);
    expect((await madeCode(app, w, { client_id: issued.client_id, provider_id: w.gym.id })).expires_at).toBe(unix('2026-03-02T18:00:00Z'));
  });
});

describe('POST /access-codes › expiry at the end of the local day at the provider', () => {
  it('New York: the next local midnight, across the March DST change', async () => {
    const ny = await createProvider(app, {
      category: 'GYM',
      tier: 'SILVER',
      name: 'NY Gym',
      timezone: 'America/New_York',
      city: 'New York',
      country: 'US',
    });
    const cases: [string, string][] = [
      ['2026-03-02T08:00:00Z', '2026-03-03T05:00:00Z'], // 03:00 EST: midnight EST
      ['2026-03-02T04:59:59Z', '2026-03-02T05:00:00Z'], // 23:59:59 EST on the 1st: one second left
      ['2026-03-08T04:30:00Z', '2026-03-08T05:00:00Z'], // 23:30 EST on the 7th
      ['2026-03-08T12:00:00Z', '2026-03-09T04:00:00Z'], // 08:00 EDT on the 8th: midnight is EDT now
    ];
    for (const [now, end] of cases) {
      app.clock.set(new Date(now));
      const client = await anotherClient(app, w, `ny-${unix(now)}@example.com`);
      const code = await madeCode(app, w, { client_id: client.id, provider_id: ny.id });
      expect(code.expires_at, `made at ${now}`).toBe(unix(end));
      expect(code.created).toBe(unix(now));
    }
  });
});

describe('POST /access-codes › the month’s visits used up: additional_visits_required', () => {
  it('opens a session (spec 2.4); a code of extra visits bought before is taken first', async () => {
    const client = await anotherClient(app, w, 'usedup@example.com');
    await useUpGymVisits(client);
    const outbox = await lastOutboxId(app);
    const res = await createCode(app, w, { client_id: client.id, provider_id: w.gym.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      object: 'access_code_session',
      message: expect.any(String),
      copay_required: false,
      additional_visits_required: true,
      session_id: expect.stringMatching(/^sess_/),
      session_expires_at: unix('2026-03-03T08:00:00Z'),
      copay_options: null,
      visits_used: 8,
      max_visits: 8,
      cost_per_visit: 1000,
    });
    expect(await outboxSince(app, outbox)).toEqual([]); // no code yet, and an access-code session announces nothing
    const [session] = await app.sql('select kind, provider_id, status, cost_per_visit::int as cost from access_code_session where id = ?', [
      res.body.session_id,
    ]);
    expect(session).toEqual({ kind: 'EXTRA_VISITS', provider_id: w.gym.id, status: 'OPEN', cost: 1000 });

    // Buying 2 extra visits makes the code with one; the next code takes the other one at once.
    const ledger = await businessLedger(app, w.reseller.id);
    const done = await confirmCode(app, w, res.body.session_id, { number_of_visits: 2, duration: 'MONTHLY' });
    expect(done.status, done.text).toBe(201);
    expect(done.body).toMatchObject({ object: 'access_code', client_id: client.id, provider_id: w.gym.id, status: 'ACTIVE' });
    expect((await businessLedger(app, w.reseller.id)).balance).toBe(ledger.balance - 2000);
    const next = await madeCode(app, w, { client_id: client.id });
    expect(next.provider_id).toBeNull();
    const [entitlement] = await app.sql('select kind, visits_total, visits_used, session_id from visit_entitlement where client_id = ?', [
      client.id,
    ]);
    expect(entitlement).toEqual({ kind: 'EXTRA_VISITS', visits_total: 2, visits_used: 2, session_id: null });
    expect((await app.sql('select session_id from access_code where id = ?', [done.body.id]))[0].session_id).toBe(res.body.session_id);
    expect((await createCode(app, w, { client_id: client.id })).body.object).toBe('access_code_session');
  });
});

describe('POST /access-codes › tier not covered: copay_required', () => {
  it('offers the provider’s co-pay options; a co-pay package bought before is used first', async () => {
    const client = await anotherClient(app, w, 'copay@example.com');
    const res = await createCode(app, w, { client_id: client.id, provider_id: w.copayGym.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      object: 'access_code_session',
      message: expect.any(String),
      copay_required: true,
      additional_visits_required: false,
      session_id: expect.stringMatching(/^sess_/),
      session_expires_at: unix('2026-03-03T08:00:00Z'),
      copay_options: [
        {
          object: 'copay_option',
          id: w.copayGym.optionId,
          name: '3 visits',
          currency: 'EUR',
          tiers: ['GOLD'],
          max_visits: 3,
          visit_duration_days: 30,
          client_copay_amount: 2500,
          client_copay_credits: 25,
        },
      ],
      visits_used: null,
      max_visits: null,
      cost_per_visit: null,
    });
    const done = await confirmCode(app, w, res.body.session_id, { copay_package_id: w.copayGym.optionId });
    expect(done.status, done.text).toBe(201);
    expect(done.body).toMatchObject({ object: 'access_code', provider_id: w.copayGym.id });
    expect(await gymVisits(client.issuedPassId)).toBe(0); // the pass's own visits are untouched
    // Two more visits of the package: codes now, then a session again.
    expect((await createCode(app, w, { client_id: client.id, provider_id: w.copayGym.id })).body.object).toBe('access_code');
    expect((await createCode(app, w, { client_id: client.id, provider_id: w.copayGym.id })).body.object).toBe('access_code');
    expect((await createCode(app, w, { client_id: client.id, provider_id: w.copayGym.id })).body.object).toBe('access_code_session');
  });

  it('not covered and no co-pay option › 403 provider_not_covered, nothing written', async () => {
    const before = await dbState(app);
    expectError(await createCode(app, w, { client_id: w.client.id, provider_id: w.closedSpa.id }), 403, 'provider_not_covered');
    await expectUnchanged(app, before);
  });
});

describe('POST /access-codes › who and where', () => {
  it('an unknown client or provider › 404 naming the field; a pass no longer active › 409; nothing written', async () => {
    const other = await createBookingWorld(app);
    const before = await dbState(app);
    expectError(await createCode(app, w, { client_id: 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ' }), 404, 'resource_not_found', 'client_id');
    expectError(
      await createCode(app, w, { client_id: w.client.id, provider_id: 'prov_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
      404,
      'resource_not_found',
      'provider_id',
    );
    expectError(await createCode(app, other, { client_id: w.client.id }), 404, 'resource_not_found', 'client_id');
    await expectUnchanged(app, before);
    const expired = await issuePass(app, w.reseller, w.passId, { email: 'expired@example.com' });
    await app.sql('update issued_pass set expires_at = ? where id = ?', [new Date('2026-03-01T00:00:00Z'), expired.id]);
    const snapshot = await dbState(app);
    expectError(await createCode(app, w, { client_id: expired.client_id, provider_id: w.gym.id }), 409, 'pass_not_active');
    await expectUnchanged(app, snapshot);
  });

  it('a replay with the same Idempotency-Key answers the same code; nothing more is taken', async () => {
    const client = await anotherClient(app, w, 'replay@example.com');
    const first = await createCode(app, w, { client_id: client.id, provider_id: w.gym.id }, 'replay-1');
    const again = await createCode(app, w, { client_id: client.id, provider_id: w.gym.id }, 'replay-1');
    expect(again.headers.get('x-idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await gymVisits(client.issuedPassId)).toBe(1);
    expect(await app.sql('select id from access_code where client_id = ?', [client.id])).toHaveLength(1);
  });
});
