import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { madeCode, provider, providerKey, redeem, scanQr, secretsIn } from '../support/access-codes.ts';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged, expectValidationError, unix } from '../support/assertions.ts';
import { anotherClient, createBookingWorld, type BookingWorld } from '../support/bookings.ts';
import { createProvider } from '../support/catalog.ts';
import { dbState, lastOutboxId, outboxSince } from '../support/db-state.ts';
import { issuePass } from '../support/factories.ts';

// The provider side of access codes (docs/partner-guide.md "Access codes", "Redeeming"): a provider key redeems a
// code once, typed or scanned; every other attempt is refused and changes nothing.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
let gymKey: string;
let copayGymKey: string;
let spaKey: string;
beforeAll(async () => {
  w = await createBookingWorld(app);
  gymKey = await providerKey(app, w.gym.id);
  copayGymKey = await providerKey(app, w.copayGym.id);
  spaKey = await providerKey(app, w.spa.id);
});

let clients = 0;
/** A code for a new client of the world (a client's month has few visits). */
async function code(body: Record<string, unknown> = { provider_id: w.gym.id }) {
  const client = await anotherClient(app, w, `redeem${++clients}@example.com`);
  return { client, ...(await madeCode(app, w, { client_id: client.id, ...body })) };
}

describe('POST /v3/api/provider/access-codes/redeem', () => {
  it('redeems a typed code once (any case): 200 REDEEMED, the visit recorded here, access_code.redeemed without the secret', async () => {
    const made = await code();
    const outbox = await lastOutboxId(app);
    app.clock.advance(3600_000);
    const res = await redeem(app, gymKey, made.code.toLowerCase());
    expect(res.status, res.text).toBe(200);
    const { code: secret, qr_code: _qr, client: _client, ...withoutSecret } = made;
    expect(res.body).toEqual({
      ...withoutSecret,
      status: 'REDEEMED',
      redeemed_at: unix('2026-03-02T09:00:00Z'),
      redeemed_provider_id: w.gym.id,
    });
    const events = await outboxSince(app, outbox);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([['access_code.redeemed', w.reseller.id]]);
    expect(events[0].payload.data.object).toEqual(res.body);
    expect(secretsIn(events, [secret])).toEqual([]);
    const [row] = await app.sql('select status, redeemed_provider_id from access_code where id = ?', [made.id]);
    expect(row).toEqual({ status: 'REDEEMED', redeemed_provider_id: w.gym.id });
    // The visit stays taken: a redeemed code gives nothing back.
    const [pass] = await app.sql<{ visits_used: Record<string, number> }>('select visits_used from issued_pass where id = ?', [
      made.client.issuedPassId,
    ]);
    expect(pass.visits_used.GYM).toBe(1);

    const before = await dbState(app);
    expectError(await redeem(app, gymKey, made.code), 409, 'access_code_used');
    await expectUnchanged(app, before);
  });

  it('redeems the scanned QR payload (its signature checked); an altered payload is 400 on code and changes nothing', async () => {
    const made = await code();
    const payload = scanQr(made.qr_code);
    const [prefix, body, signature] = payload.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const before = await dbState(app);
    for (const altered of [
      `${prefix}.${Buffer.from(JSON.stringify({ ...claims, provider_id: null })).toString('base64url')}.${signature}`,
      `${prefix}.${body}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BA' : 'AA'}`,
      `${prefix}.${body}`,
      `${prefix}.${body}.${signature}.x`,
      `${prefix}.!!!.${signature}`,
    ]) {
      expectValidationError(await redeem(app, gymKey, altered), 'code');
    }
    await expectUnchanged(app, before);
    const res = await redeem(app, gymKey, payload);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: made.id, status: 'REDEEMED' });
    expectError(await redeem(app, gymKey, payload), 409, 'access_code_used');
  });

  it('a payload a key holder signs itself: the code must be real and the id its own (else 404)', async () => {
    // Every provider holds the verification key, so it can sign: what counts is the code behind it.
    const key = (await provider(app, '/access-codes/verification-key', { key: gymKey })).body;
    const sign = (claims: object) => {
      const body = `AC1.${Buffer.from(JSON.stringify({ kid: key.kid, ...claims })).toString('base64url')}`;
      return `${body}.${createHmac('sha256', Buffer.from(key.key, 'base64url')).update(body).digest('base64url')}`;
    };
    const a = await code();
    const b = await code();
    const claims = { client_id: a.client.id, provider_id: w.gym.id, exp: a.expires_at };
    const before = await dbState(app);
    expectError(await redeem(app, gymKey, sign({ ...claims, id: a.id, code: b.code })), 404, 'resource_not_found', 'code');
    expectError(await redeem(app, gymKey, sign({ ...claims, id: a.id, code: 'ZZZZZZZZ' })), 404, 'resource_not_found', 'code');
    expectValidationError(await redeem(app, gymKey, sign({ ...claims, id: a.id })), 'code');
    await expectUnchanged(app, before);
    expect((await redeem(app, gymKey, sign({ ...claims, id: a.id, code: a.code }))).status).toBe(200);
  });

  it('another provider’s code › 404 like an unknown one (nothing to probe); an unknown code › 404; nothing changes', async () => {
    const made = await code();
    const before = await dbState(app);
    const foreign = await redeem(app, copayGymKey, made.code);
    expectError(foreign, 404, 'resource_not_found', 'code');
    const unknown = await redeem(app, gymKey, 'ZZZZZZZZ');
    expectError(unknown, 404, 'resource_not_found', 'code');
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
    expect(foreign.text).not.toContain(made.code);
    await expectUnchanged(app, before);
    expect((await redeem(app, gymKey, made.code)).status).toBe(200);
  });

  it('a code past its day › 422 access_code_expired, before the sweep ran, and nothing changes', async () => {
    const made = await code();
    app.clock.set(new Date(made.expires_at * 1000));
    const before = await dbState(app);
    expectError(await redeem(app, gymKey, made.code), 422, 'access_code_expired');
    await expectUnchanged(app, before);
  });

  it('a code for any gym: at a gym the pass covers › 200; at one it does not, or at a spa › 403 provider_not_covered', async () => {
    const silver = await createProvider(app, { category: 'GYM', tier: 'BRONZE', name: 'Bronze Gym' });
    const bronzeKey = await providerKey(app, silver.id);
    const any = await code({});
    const before = await dbState(app);
    expectError(await redeem(app, copayGymKey, any.code), 403, 'provider_not_covered'); // GOLD: not covered
    expectError(await redeem(app, spaKey, any.code), 403, 'provider_not_covered'); // a spa the pass covers, but a gym code
    await expectUnchanged(app, before);
    const res = await redeem(app, bronzeKey, any.code);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ provider_id: null, redeemed_provider_id: silver.id });
  });

  it('a pass cancelled since › 409 pass_not_active', async () => {
    const made = await code();
    await app.sql("update issued_pass set status = 'CANCELLED' where id = ?", [made.client.issuedPassId]);
    const before = await dbState(app);
    expectError(await redeem(app, gymKey, made.code), 409, 'pass_not_active');
    await expectUnchanged(app, before);
  });

  it('bad bodies › 400 naming the field; a reseller key › 403 permission_denied', async () => {
    const before = await dbState(app);
    expectValidationError(await redeem(app, gymKey, 'ABC'), 'code');
    expectValidationError(await redeem(app, gymKey, 'ABCDEFG0'), 'code'); // 0 is not in the alphabet
    expectValidationError(await provider(app, '/access-codes/redeem', { key: gymKey, body: {} }), 'code');
    expectValidationError(await provider(app, '/access-codes/redeem', { key: gymKey, body: { code: 42 } }), 'code');
    expectValidationError(await provider(app, '/access-codes/redeem', { key: gymKey, body: { code: 'ABCDEFGH', x: 1 } }), 'x');
    expectError(await provider(app, '/access-codes/redeem', { key: w.reseller.key, body: { code: 'ABCDEFGH' } }), 403, 'permission_denied');
    expectError(await provider(app, '/access-codes/verification-key', { key: w.reseller.key }), 403, 'permission_denied');
    expectError(await provider(app, '/access-codes/verification-key'), 401, 'invalid_api_key');
    await expectUnchanged(app, before);
  });

  it('20 concurrent redeems of one code › exactly one 200, 19 × 409 access_code_used, one event', async () => {
    const made = await code();
    const outbox = await lastOutboxId(app);
    const replies = await Promise.all(Array.from({ length: 20 }, () => redeem(app, gymKey, made.code)));
    const statuses = replies.map((r) => (r.status === 200 ? '200' : `${r.status} ${r.body.error.code}`)).sort();
    expect(statuses).toEqual(['200', ...Array(19).fill('409 access_code_used')]);
    expect((await outboxSince(app, outbox)).map((e) => e.payload.type)).toEqual(['access_code.redeemed']);
  });

  it('the verification key is the same for every provider and across calls', async () => {
    const a = await provider(app, '/access-codes/verification-key', { key: gymKey });
    const b = await provider(app, '/access-codes/verification-key', { key: spaKey });
    expect(a.status, a.text).toBe(200);
    expect(b.body).toEqual(a.body);
  });
});

describe('a client’s passcode is not an access code', () => {
  it('redeeming a pass’s passcode › 404 (or 400 when outside the alphabet)', async () => {
    const issued = await issuePass(app, w.reseller, w.passId, { email: 'passcode-redeem@example.com' });
    const res = await redeem(app, gymKey, issued.passcode);
    expect([400, 404]).toContain(res.status);
  });
});
