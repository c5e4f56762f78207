import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { fundReseller } from '../../src/modules/resellers/index.ts';
import { masterKey, secretBox } from '../../src/platform/secrets.ts';
import { useApp, type TestApp } from '../support/app.ts';
import { businessLedger, clientBody, createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { call, gql, v3, type Reply } from '../support/http.ts';

// Spec part 8 (idempotency rules 1–8) and decisions §6, black-box: real HTTP, real PostgreSQL.

const app = useApp();

const newKey = () => randomUUID();

/** What one reseller's requests wrote: the rows a double execution would duplicate. */
async function rowsOf(target: TestApp, resellerId: string) {
  const [row] = await target.sql<Record<string, string>>(
    `select (select count(*) from client where reseller_id = ?) as clients,
            (select count(*) from issued_pass where reseller_id = ?) as issued_passes,
            (select count(*) from business_transaction where reseller_id = ? and type = 'DEBIT') as debits,
            (select count(*) from outbox where reseller_id = ?) as outbox,
            (select count(*) from idempotency_record where reseller_id = ?) as records`,
    [resellerId, resellerId, resellerId, resellerId, resellerId],
  );
  return {
    clients: Number(row.clients),
    issuedPasses: Number(row.issued_passes),
    debits: Number(row.debits),
    outbox: Number(row.outbox),
    records: Number(row.records),
  };
}

/** The record as stored (`sealed_text`) and with its response opened as the server opens it (`response_text`). */
async function storedRecord(resellerId: string, key: string) {
  const rows = await app.sql<{ status_code: number | null; fingerprint: string; sealed_text: string | null }>(
    `select status_code, fingerprint, response_body #>> '{}' as sealed_text from idempotency_record where reseller_id = ? and key = ?`,
    [resellerId, key],
  );
  if (!rows[0]) return undefined;
  const box = secretBox(await masterKey(app.orm.em, app.config), 'idempotency responses');
  return { ...rows[0], response_text: rows[0].sealed_text === null ? null : box.open(rows[0].sealed_text) };
}

/** A replay: same status, the very same body (byte for byte), the replay header and a Request-Id of its own. */
function expectReplayOf(replay: Reply, original: Reply) {
  expect(original.headers.get('x-idempotent-replayed')).toBeNull();
  expect(replay.status).toBe(original.status);
  expect(replay.body).toEqual(original.body);
  expect(replay.text).toBe(original.text);
  expect(replay.headers.get('x-idempotent-replayed')).toBe('true');
  expect(replay.headers.get('request-id')).toMatch(/^req_/);
  expect(replay.headers.get('request-id')).not.toBe(original.headers.get('request-id'));
}

function expectExecuted(res: Reply, status = 201) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('x-idempotent-replayed')).toBeNull();
}

function expectIdempotencyError(res: Reply, code: 'idempotency_key_reused' | 'idempotency_request_in_progress') {
  expect(res.status, res.text).toBe(409);
  expect(res.headers.get('x-idempotent-replayed')).toBeNull();
  expect(res.body.error).toMatchObject({ type: 'idempotency_error', code });
  expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
}

async function fund(target: TestApp, resellerId: string, amount: number) {
  await target.orm.em.fork().transactional((tx) => fundReseller(tx, resellerId, amount, target.clock.now()));
}

/** A funded reseller with a PREPAID package it can afford a few times. */
async function prepaidReseller(opts: { balance?: number; price?: number } = {}, target: TestApp = app) {
  const reseller = await createReseller(target, { balance: opts.balance ?? 100_000 });
  const pass = await createPassPackage(target, reseller, { paymentModel: 'PREPAID', price: opts.price ?? 10_000 });
  return { reseller, pass };
}

const issue = (reseller: TestReseller, body: unknown, idempotencyKey?: string, target: TestApp = app) =>
  v3(target, '/issued_passes', { key: reseller.key, body, idempotencyKey });

describe('Idempotency-Key on POST /issued_passes', () => {
  it('first request with a new key › executes once and stores its response under the key', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const res = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(res);
    expect(res.body).toMatchObject({ object: 'issued_pass', pass_id: pass.id, status: 'ACTIVE' });
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
    const record = await storedRecord(reseller.id, key);
    expect(record!.status_code).toBe(201);
    expect(record!.response_text).toBe(res.text);
    // Sealed at rest (docs/operator-guide.md "Secrets at rest"): none of the response is readable in the table.
    expect(record!.sealed_text).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    for (const shown of [res.body.passcode, res.body.client_id, res.body.id]) expect(record!.sealed_text).not.toContain(shown);
    // The event written with the effects names the key it was made under.
    const [event] = await app.sql<{ payload: { request: { idempotency_key: string | null } } }>(
      'select payload from outbox where reseller_id = ?',
      [reseller.id],
    );
    expect(event.payload.request.idempotency_key).toBe(key);
  });

  it('retry with the same key and body › replays status and body with X-Idempotent-Replayed and a new Request-Id, executing nothing', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(first);
    const after = await rowsOf(app, reseller.id);
    const balance = await businessLedger(app, reseller.id);

    const second = await issue(reseller, clientBody(pass.id), key);
    const third = await issue(reseller, clientBody(pass.id), key);
    expectReplayOf(second, first);
    expectReplayOf(third, first);
    expect(second.headers.get('request-id')).not.toBe(third.headers.get('request-id'));
    expect(await rowsOf(app, reseller.id)).toEqual(after);
    expect(after).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
    expect(await businessLedger(app, reseller.id)).toEqual(balance);
  });

  it('retry with the body keys in another order › replays: the fingerprint is canonical JSON', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issue(
      reseller,
      { pass_id: pass.id, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+4915112345678' },
      key,
    );
    expectExecuted(first);
    const reordered =
      '{"phone":"+4915112345678","email":"ada@example.com","last_name":"Lovelace","first_name":"Ada","pass_id":"' + pass.id + '"}';
    const replay = await v3(app, '/issued_passes', {
      key: reseller.key,
      raw: reordered,
      headers: { 'Content-Type': 'application/json' },
      idempotencyKey: key,
    });
    expectReplayOf(replay, first);
    expect((await rowsOf(app, reseller.id)).clients).toBe(1);
  });

  it('same key, different body › answers 409 idempotency_key_reused and writes nothing', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(first);
    const before = await rowsOf(app, reseller.id);
    const balance = await businessLedger(app, reseller.id);

    const other = await issue(reseller, clientBody(pass.id, { first_name: 'Grace' }), key);
    expectIdempotencyError(other, 'idempotency_key_reused');
    // A field added is a different body too.
    const extra = await issue(reseller, clientBody(pass.id, { external_id: 'crm-1' }), key);
    expectIdempotencyError(extra, 'idempotency_key_reused');

    expect(await rowsOf(app, reseller.id)).toEqual(before);
    expect(await businessLedger(app, reseller.id)).toEqual(balance);
    // The stored response is untouched: the original body still replays.
    expectReplayOf(await issue(reseller, clientBody(pass.id), key), first);
  });

  it('same key on another operation › answers 409 idempotency_key_reused (the fingerprint includes method and path)', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(first);
    const before = await rowsOf(app, reseller.id);
    const renew = await v3(app, `/issued_passes/${first.body.client_id}/renew`, { key: reseller.key, body: {}, idempotencyKey: key });
    expectIdempotencyError(renew, 'idempotency_key_reused');
    expect(await rowsOf(app, reseller.id)).toEqual(before);
  });

  it('two concurrent requests with one key › execute once and both get the same body', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const replies = await Promise.all([0, 1].map(() => issue(reseller, clientBody(pass.id), key)));
    for (const r of replies) expect(r.status, r.text).toBe(201);
    expect(replies[1].body).toEqual(replies[0].body);
    expect(replies.filter((r) => r.headers.get('x-idempotent-replayed') === 'true')).toHaveLength(1);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
  });

  it('five concurrent requests with one key › one client, one issued pass, one ledger debit, five identical bodies', async () => {
    const { reseller, pass } = await prepaidReseller({ balance: 100_000, price: 10_000 });
    const key = newKey();
    const replies = await Promise.all([0, 1, 2, 3, 4].map(() => issue(reseller, clientBody(pass.id), key)));
    for (const r of replies) {
      expect(r.status, r.text).toBe(201);
      expect(r.body).toEqual(replies[0].body);
    }
    expect(replies.filter((r) => r.headers.get('x-idempotent-replayed') === null)).toHaveLength(1);
    expect(new Set(replies.map((r) => r.headers.get('request-id'))).size).toBe(5);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 90_000, ledgerSum: 90_000, rows: 2 });
  });

  it('five concurrent requests with five keys › each executes (the wait is per key)', async () => {
    const { reseller, pass } = await prepaidReseller({ balance: 100_000, price: 10_000 });
    const replies = await Promise.all([0, 1, 2, 3, 4].map(() => issue(reseller, clientBody(pass.id), newKey())));
    for (const r of replies) expectExecuted(r);
    expect(new Set(replies.map((r) => r.body.client_id)).size).toBe(5);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 5, issuedPasses: 5, debits: 5, outbox: 5, records: 5 });
  });

  it('no key › every request executes and nothing is stored', async () => {
    const { reseller, pass } = await prepaidReseller();
    const first = await issue(reseller, clientBody(pass.id));
    const second = await issue(reseller, clientBody(pass.id));
    expectExecuted(first);
    expectExecuted(second);
    expect(second.body.client_id).not.toBe(first.body.client_id);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 2, issuedPasses: 2, debits: 2, outbox: 2, records: 0 });
  });

  it('the same key from two resellers › executes for each (the key is scoped per reseller)', async () => {
    const a = await prepaidReseller();
    const b = await prepaidReseller();
    const key = newKey();
    const fromA = await issue(a.reseller, clientBody(a.pass.id), key);
    const fromB = await issue(b.reseller, clientBody(b.pass.id), key);
    expectExecuted(fromA);
    expectExecuted(fromB);
    expect(fromB.body.client_id).not.toBe(fromA.body.client_id);
    expect(await rowsOf(app, a.reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
    expect(await rowsOf(app, b.reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
    // Each reseller's retry replays its own response, never the other's.
    expectReplayOf(await issue(a.reseller, clientBody(a.pass.id), key), fromA);
    expectReplayOf(await issue(b.reseller, clientBody(b.pass.id), key), fromB);
  });

  it('a 422 insufficient_balance from the service › is stored and replayed even after the account is funded', async () => {
    const { reseller, pass } = await prepaidReseller({ balance: 5_000, price: 29_900 });
    const key = newKey();
    const first = await issue(reseller, clientBody(pass.id), key);
    expect(first.status, first.text).toBe(422);
    expect(first.body.error).toMatchObject({ type: 'unprocessable_error', code: 'insufficient_balance' });
    // The failed operation's effects are rolled back; only the record stays.
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 1 });
    expect((await storedRecord(reseller.id, key))!.status_code).toBe(422);

    await fund(app, reseller.id, 100_000);
    const replay = await issue(reseller, clientBody(pass.id), key);
    expectReplayOf(replay, first);
    // The stored body is the original one, request_id included.
    expect(replay.body.error.request_id).toBe(first.headers.get('request-id'));
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 1 });

    // Spec part 7: after a 4xx, fix the request and use a new key.
    expectExecuted(await issue(reseller, clientBody(pass.id), newKey()));
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 75_100, ledgerSum: 75_100, rows: 3 });
  });

  it('a 400 validation_error from the body › is stored and replayed', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const bad = clientBody(pass.id, { email: 'not-an-e-mail' });
    const first = await issue(reseller, bad, key);
    expect(first.status, first.text).toBe(400);
    expect(first.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param: 'email' });
    expect((await storedRecord(reseller.id, key))!.status_code).toBe(400);
    expectReplayOf(await issue(reseller, bad, key), first);
    // Fixing the body under the same key is a different request.
    expectIdempotencyError(await issue(reseller, clientBody(pass.id), key), 'idempotency_key_reused');
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 1 });
  });

  it('a 5xx inside the transaction › is not stored, and a retry with the same key executes exactly once', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    await app.sql('alter table outbox rename to outbox_broken');
    let failed: Reply;
    try {
      failed = await issue(reseller, clientBody(pass.id), key);
    } finally {
      await app.sql('alter table outbox_broken rename to outbox');
    }
    expect(failed.status, failed.text).toBe(500);
    expect(failed.body.error).toMatchObject({ type: 'api_error', code: 'internal_error' });
    expect(failed.text).not.toMatch(/outbox/);
    expect(await storedRecord(reseller.id, key)).toBeUndefined();
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 0 });
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 100_000, ledgerSum: 100_000, rows: 1 });

    const retry = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(retry);
    expectReplayOf(await issue(reseller, clientBody(pass.id), key), retry);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
  });

  it('a key past retention (IDEMPOTENCY_TTL_SECONDS, 90 s) › is forgotten: the same key with another body executes', async () => {
    expect(app.config.IDEMPOTENCY_TTL_SECONDS).toBe(90);
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(first);

    app.clock.advance(89_000); // still retained
    expectReplayOf(await issue(reseller, clientBody(pass.id), key), first);
    expectIdempotencyError(await issue(reseller, clientBody(pass.id, { first_name: 'Grace' }), key), 'idempotency_key_reused');

    app.clock.advance(2_000); // 91 s after the first request
    const later = await issue(reseller, clientBody(pass.id, { first_name: 'Grace' }), key);
    expectExecuted(later);
    expect(later.body.client_id).not.toBe(first.body.client_id);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 2, issuedPasses: 2, debits: 2, outbox: 2, records: 1 });
    // The key now belongs to the new request.
    expectReplayOf(await issue(reseller, clientBody(pass.id, { first_name: 'Grace' }), key), later);
    expect((await storedRecord(reseller.id, key))!.response_text).toBe(later.text);
  });

  it('a key past retention with the same body › executes again', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(first);
    app.clock.advance(91_000);
    const again = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(again);
    expect(again.body.client_id).not.toBe(first.body.client_id);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 2, issuedPasses: 2, debits: 2, outbox: 2, records: 1 });
  });

  it('a 255-character printable ASCII key › is accepted', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = `${'k'.repeat(250)} ~!#$`;
    expect(key).toHaveLength(255);
    const first = await issue(reseller, clientBody(pass.id), key);
    expectExecuted(first);
    expectReplayOf(await issue(reseller, clientBody(pass.id), key), first);
  });

  it.each([
    ['a 256-character key', 'k'.repeat(256)],
    ['an empty key', ''],
    ['a key with a non-ASCII character', 'clé-1'],
    ['a key with a control character (tab)', 'key\twith-tab'],
  ])('%s › answers 400 validation_error on Idempotency-Key and writes nothing', async (_, key) => {
    const { reseller, pass } = await prepaidReseller();
    const res = await issue(reseller, clientBody(pass.id), key);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param: 'Idempotency-Key' });
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 0 });
  });
});

describe('Idempotency-Key on POST /issued_passes/{client_id}/renew', () => {
  async function prepaidClient(opts: { balance?: number; price?: number } = {}) {
    const { reseller, pass } = await prepaidReseller(opts);
    const issued = await issuePass(app, reseller, pass.id);
    return { reseller, pass, issued };
  }
  const renew = (reseller: TestReseller, clientId: string, key?: string, body: unknown = {}) =>
    v3(app, `/issued_passes/${clientId}/renew`, { key: reseller.key, body, idempotencyKey: key });
  const expiryOf = async (clientId: string) =>
    Number(
      (
        await app.sql<{ ms: string }>('select (extract(epoch from expires_at) * 1000)::bigint as ms from issued_pass where client_id = ?', [
          clientId,
        ])
      )[0].ms,
    );

  it('retry with the same key › replays the renewal without extending or debiting twice', async () => {
    const { reseller, issued } = await prepaidClient();
    const key = newKey();
    const first = await renew(reseller, issued.client_id, key);
    expectExecuted(first);
    expect(first.body).toMatchObject({ object: 'pass_renewal' });
    const expiry = await expiryOf(issued.client_id);
    expect(expiry).toBeGreaterThan(issued.expires_at * 1000);
    const ledger = await businessLedger(app, reseller.id);

    expectReplayOf(await renew(reseller, issued.client_id, key), first);
    expectReplayOf(await renew(reseller, issued.client_id, key), first);
    expect(await expiryOf(issued.client_id)).toBe(expiry);
    expect(await businessLedger(app, reseller.id)).toEqual(ledger);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ issuedPasses: 1, debits: 2, outbox: 2, records: 1 });
  });

  it('a retry without a body › replays: an empty body reads as {}', async () => {
    const { reseller, issued } = await prepaidClient();
    const key = newKey();
    const first = await renew(reseller, issued.client_id, key);
    expectExecuted(first);
    const bodiless = await v3(app, `/issued_passes/${issued.client_id}/renew`, { method: 'POST', key: reseller.key, idempotencyKey: key });
    expectReplayOf(bodiless, first);
  });

  it('same key for another client › answers 409 idempotency_key_reused (path parameters are fingerprinted)', async () => {
    const { reseller, pass, issued } = await prepaidClient();
    const other = await issuePass(app, reseller, pass.id, { first_name: 'Grace' });
    const key = newKey();
    expectExecuted(await renew(reseller, issued.client_id, key));
    const before = await rowsOf(app, reseller.id);
    const expiry = await expiryOf(other.client_id);
    expectIdempotencyError(await renew(reseller, other.client_id, key), 'idempotency_key_reused');
    expect(await rowsOf(app, reseller.id)).toEqual(before);
    expect(await expiryOf(other.client_id)).toBe(expiry);
  });

  it('five concurrent renewals with one key › renew once and answer five identical bodies', async () => {
    const { reseller, issued } = await prepaidClient();
    const key = newKey();
    const replies = await Promise.all([0, 1, 2, 3, 4].map(() => renew(reseller, issued.client_id, key)));
    for (const r of replies) {
      expect(r.status, r.text).toBe(201);
      expect(r.body).toEqual(replies[0].body);
    }
    expect(replies.filter((r) => r.headers.get('x-idempotent-replayed') === null)).toHaveLength(1);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ debits: 2, records: 1 });
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 80_000, ledgerSum: 80_000, rows: 3 });
    // Extended by exactly one period: the renewal's previous expiry is the issue's expiry.
    expect(replies[0].body).toMatchObject({ previous_expires_at: issued.expires_at });
    expect(Math.floor((await expiryOf(issued.client_id)) / 1000)).toBe(replies[0].body.new_expires_at);
  });

  it('a 422 insufficient_balance › is stored and replayed after the account is funded; a new key renews', async () => {
    const { reseller, issued } = await prepaidClient({ balance: 10_000, price: 10_000 });
    const key = newKey();
    const expiry = await expiryOf(issued.client_id);
    const first = await renew(reseller, issued.client_id, key);
    expect(first.status, first.text).toBe(422);
    expect(first.body.error).toMatchObject({ code: 'insufficient_balance' });
    expect(await expiryOf(issued.client_id)).toBe(expiry); // the savepoint rolled the extension back

    await fund(app, reseller.id, 50_000);
    expectReplayOf(await renew(reseller, issued.client_id, key), first);
    expect(await expiryOf(issued.client_id)).toBe(expiry);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 50_000, ledgerSum: 50_000, rows: 3 });

    expectExecuted(await renew(reseller, issued.client_id, newKey()));
    expect(await expiryOf(issued.client_id)).toBeGreaterThan(expiry);
    expect(await businessLedger(app, reseller.id)).toEqual({ balance: 40_000, ledgerSum: 40_000, rows: 4 });
  });

  it('a 409 not_prepaid for a PAYG pass › is stored and replayed', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pass = await createPassPackage(app, reseller, { paymentModel: 'PAYG' });
    const issued = await issuePass(app, reseller, pass.id);
    const key = newKey();
    const first = await renew(reseller, issued.client_id, key);
    expect(first.status, first.text).toBe(409);
    expect(first.body.error).toMatchObject({ type: 'resource_conflict_error', code: 'not_prepaid' });
    expectReplayOf(await renew(reseller, issued.client_id, key), first);
    expect((await storedRecord(reseller.id, key))!.status_code).toBe(409);
  });
});

describe('Idempotency-Key where it is not accepted', () => {
  it('GET /issued_passes/{client_id} with a key › executes every time and stores nothing', async () => {
    const { reseller, pass } = await prepaidReseller();
    const issued = await issuePass(app, reseller, pass.id);
    const key = newKey();
    const first = await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key, idempotencyKey: key });
    const second = await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key, idempotencyKey: key });
    for (const r of [first, second]) expectExecuted(r, 200);
    expect(second.body).toEqual(first.body);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ records: 0 });
    // The read sees the current state, not a stored answer: a renewal shows up under the same key.
    expectExecuted(await v3(app, `/issued_passes/${issued.client_id}/renew`, { key: reseller.key, body: {} }));
    const third = await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key, idempotencyKey: key });
    expectExecuted(third, 200);
    expect(third.body.expires_at).toBeGreaterThan(first.body.expires_at);
  });

  it('GET with an invalid key › ignores it (no validation error)', async () => {
    const { reseller } = await prepaidReseller();
    const res = await v3(app, '/passes', { key: reseller.key, idempotencyKey: 'k'.repeat(300) });
    expectExecuted(res, 200);
    expect(res.body).toMatchObject({ object: 'list' });
    expect(await rowsOf(app, reseller.id)).toMatchObject({ records: 0 });
  });
});

describe('Idempotency-Key while a request with the same key is in progress', () => {
  const slow = useApp({ IDEMPOTENCY_WAIT_MS: '300' });

  /** Holds an uncommitted idempotency record for (reseller, key), as a first request in flight would. */
  async function holdKey(target: TestApp, resellerId: string, key: string) {
    const client = new pg.Client({ connectionString: target.databaseUrl });
    await client.connect();
    await client.query('begin');
    await client.query('insert into idempotency_record (reseller_id, key, fingerprint, created_at) values ($1, $2, $3, $4)', [
      resellerId,
      key,
      '0'.repeat(64),
      target.clock.now(),
    ]);
    return client;
  }

  it('REST › answers 409 idempotency_request_in_progress after IDEMPOTENCY_WAIT_MS, then executes once the holder rolls back', async () => {
    const { reseller, pass } = await prepaidReseller({}, slow);
    const key = newKey();
    const holder = await holdKey(slow, reseller.id, key);
    try {
      const waited = await issue(reseller, clientBody(pass.id), key, slow);
      expectIdempotencyError(waited, 'idempotency_request_in_progress');
      expect(await rowsOf(slow, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 0 });
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    const res = await issue(reseller, clientBody(pass.id), key, slow);
    expectExecuted(res);
    expect(await rowsOf(slow, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
  });

  it('GraphQL › answers HTTP 409 idempotency_request_in_progress, then executes once the holder rolls back', async () => {
    const { reseller, pass } = await prepaidReseller({}, slow);
    const key = newKey();
    const holder = await holdKey(slow, reseller.id, key);
    try {
      const waited = await gql(slow, reseller.key, ISSUE, { input: gqlInput(pass.id) }, { idempotencyKey: key });
      expect(waited.status, waited.text).toBe(409);
      expect(waited.body.errors?.[0].extensions).toMatchObject({ type: 'idempotency_error', code: 'idempotency_request_in_progress' });
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    const res = await gql(slow, reseller.key, ISSUE, { input: gqlInput(pass.id) }, { idempotencyKey: key });
    expectExecuted(res, 200);
    expect(res.body.data?.issuePass.__typename).toBe('IssuedPassPayload');
    expect(await rowsOf(slow, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
  });

  it('a waiting request › answers with what the first request stored once it commits', async () => {
    // On the default app (10 s bound): the request blocks on the uncommitted record and, when
    // the holder commits a response, replays it instead of executing.
    const { reseller, pass } = await prepaidReseller();
    const body = clientBody(pass.id);
    // The fingerprint of this very body, as the server stored it for an earlier key.
    const earlier = await issue(reseller, body, newKey());
    expectExecuted(earlier);
    // What the holder stores: a documented issued_pass (v3() checks replies against docs/openapi.json), told apart by its id.
    const stored = { ...earlier.body, id: 'ipass_from_first_request' };
    const [{ fingerprint }] = await app.sql<{ fingerprint: string }>('select fingerprint from idempotency_record where reseller_id = ?', [
      reseller.id,
    ]);
    const key = newKey();
    const holder = await holdKey(app, reseller.id, key);
    try {
      const pending = issue(reseller, body, key);
      await waitForLockWaiter();
      // The holder finishes as a first request with this body would: fingerprint and response.
      await holder.query(
        'update idempotency_record set fingerprint = $1, status_code = 201, response_body = $2 where reseller_id = $3 and key = $4',
        [fingerprint, JSON.stringify(stored), reseller.id, key],
      );
      await holder.query('commit');
      const res = await pending;
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get('x-idempotent-replayed')).toBe('true');
      expect(res.body).toEqual(stored);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
    expect(await rowsOf(app, reseller.id)).toMatchObject({ clients: 1, issuedPasses: 1, debits: 1, records: 2 });
  });
});

/** Waits until a backend of the app's database is blocked on a lock (the idempotency insert). */
async function waitForLockWaiter(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [{ n }] = await app.sql<{ n: string }>(
      "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if (Number(n) > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no request ever waited on the idempotency record');
}

const ISSUE = `mutation Issue($input: IssuePassInput!) {
  issuePass(input: $input) {
    __typename
    ... on IssuedPassPayload { issuedPass { id passcode status paymentModel client { id } } }
    ... on Error { code message }
    ... on InputError { param }
  }
}`;

const gqlInput = (passId: string, extra: Record<string, unknown> = {}) => ({
  passId,
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  ...extra,
});

describe('Idempotency-Key on GraphQL mutations (POST /graphql)', () => {
  const issueGql = (reseller: TestReseller, input: Record<string, unknown>, key?: string) =>
    gql(app, reseller.key, ISSUE, { input }, key === undefined ? {} : { idempotencyKey: key });

  it('retry with the same key and variables › replays the identical JSON with X-Idempotent-Replayed, executing nothing', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issueGql(reseller, gqlInput(pass.id), key);
    expectExecuted(first, 200);
    expect(first.body.data?.issuePass).toMatchObject({
      __typename: 'IssuedPassPayload',
      issuedPass: { status: 'ACTIVE', paymentModel: 'PREPAID' },
    });
    expect(first.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);

    const replay = await issueGql(reseller, gqlInput(pass.id), key);
    expectReplayOf(replay, first);
    expect(replay.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
    expect((await storedRecord(reseller.id, key))!.status_code).toBe(200);
  });

  it('retry with the variables in another key order › replays', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issueGql(reseller, gqlInput(pass.id), key);
    expectExecuted(first, 200);
    const raw = JSON.stringify({
      variables: { input: { email: 'ada@example.com', lastName: 'Lovelace', firstName: 'Ada', passId: pass.id } },
      query: ISSUE,
    });
    const replay = await call(app, '/graphql', {
      key: reseller.key,
      raw,
      idempotencyKey: key,
      headers: { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json' },
    });
    expectReplayOf(replay, first);
    expect((await rowsOf(app, reseller.id)).clients).toBe(1);
  });

  it('same key, different variables › answers HTTP 409 idempotency_key_reused and writes nothing', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const first = await issueGql(reseller, gqlInput(pass.id), key);
    expectExecuted(first, 200);
    const before = await rowsOf(app, reseller.id);
    const other = await issueGql(reseller, gqlInput(pass.id, { firstName: 'Grace' }), key);
    expect(other.status, other.text).toBe(409);
    expect(other.headers.get('x-idempotent-replayed')).toBeNull();
    expect(other.body.errors?.[0].extensions).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect(other.body.data).toBeUndefined();
    expect(await rowsOf(app, reseller.id)).toEqual(before);
  });

  it('same key, same variables, another selection set › answers HTTP 409 idempotency_key_reused', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    expectExecuted(await issueGql(reseller, gqlInput(pass.id), key), 200);
    const other = await gql(
      app,
      reseller.key,
      'mutation Issue($input: IssuePassInput!) { issuePass(input: $input) { __typename } }',
      { input: gqlInput(pass.id) },
      { idempotencyKey: key },
    );
    expect(other.status, other.text).toBe(409);
    expect(other.body.errors?.[0].extensions?.code).toBe('idempotency_key_reused');
  });

  it('a key first used over REST › answers 409 idempotency_key_reused on GraphQL (one scope per reseller and key)', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    expectExecuted(await issue(reseller, clientBody(pass.id), key));
    const other = await issueGql(reseller, gqlInput(pass.id), key);
    expect(other.status, other.text).toBe(409);
    expect(other.body.errors?.[0].extensions?.code).toBe('idempotency_key_reused');
    expect((await rowsOf(app, reseller.id)).clients).toBe(1);
  });

  it('five concurrent mutations with one key › execute once and answer five identical bodies', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const replies = await Promise.all([0, 1, 2, 3, 4].map(() => issueGql(reseller, gqlInput(pass.id), key)));
    for (const r of replies) {
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual(replies[0].body);
    }
    expect(replies[0].body.data?.issuePass.__typename).toBe('IssuedPassPayload');
    expect(replies.filter((r) => r.headers.get('x-idempotent-replayed') === null)).toHaveLength(1);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
  });

  it('no key › every mutation executes', async () => {
    const { reseller, pass } = await prepaidReseller();
    const first = await issueGql(reseller, gqlInput(pass.id));
    const second = await issueGql(reseller, gqlInput(pass.id));
    expectExecuted(first, 200);
    expectExecuted(second, 200);
    expect(second.body.data?.issuePass.issuedPass.id).not.toBe(first.body.data?.issuePass.issuedPass.id);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 2, issuedPasses: 2, debits: 2, outbox: 2, records: 0 });
  });

  it('the same key from two resellers › executes for each', async () => {
    const a = await prepaidReseller();
    const b = await prepaidReseller();
    const key = newKey();
    expectExecuted(await issueGql(a.reseller, gqlInput(a.pass.id), key), 200);
    expectExecuted(await issueGql(b.reseller, gqlInput(b.pass.id), key), 200);
    expect((await rowsOf(app, a.reseller.id)).clients).toBe(1);
    expect((await rowsOf(app, b.reseller.id)).clients).toBe(1);
  });

  it('a typed domain error (UnprocessableError insufficient_balance) › is stored and replayed after funding', async () => {
    const { reseller, pass } = await prepaidReseller({ balance: 5_000, price: 29_900 });
    const key = newKey();
    const first = await issueGql(reseller, gqlInput(pass.id), key);
    expectExecuted(first, 200);
    expect(first.body.data?.issuePass).toMatchObject({ __typename: 'UnprocessableError', code: 'insufficient_balance' });
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 1 });

    await fund(app, reseller.id, 100_000);
    expectReplayOf(await issueGql(reseller, gqlInput(pass.id), key), first);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 1 });
    const fresh = await issueGql(reseller, gqlInput(pass.id), newKey());
    expect(fresh.body.data?.issuePass.__typename).toBe('IssuedPassPayload');
  });

  it('an unexpected failure inside the mutation › is not stored, and a retry with the same key executes exactly once', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    await app.sql('alter table outbox rename to outbox_broken');
    let failed: Reply;
    try {
      failed = await issueGql(reseller, gqlInput(pass.id), key);
    } finally {
      await app.sql('alter table outbox_broken rename to outbox');
    }
    expect(failed.headers.get('x-idempotent-replayed')).toBeNull();
    expect(failed.body.errors?.[0].extensions).toMatchObject({ code: 'internal_error' });
    expect(failed.text).not.toMatch(/outbox/);
    expect(await storedRecord(reseller.id, key)).toBeUndefined();
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 0 });

    const retry = await issueGql(reseller, gqlInput(pass.id), key);
    expectExecuted(retry, 200);
    expect(retry.body.data?.issuePass.__typename).toBe('IssuedPassPayload');
    expectReplayOf(await issueGql(reseller, gqlInput(pass.id), key), retry);
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 1, issuedPasses: 1, debits: 1, outbox: 1, records: 1 });
  });

  it('a 256-character key on a mutation › answers HTTP 400 validation_error on Idempotency-Key', async () => {
    const { reseller, pass } = await prepaidReseller();
    const res = await issueGql(reseller, gqlInput(pass.id), 'k'.repeat(256));
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'validation_error', param: 'Idempotency-Key' });
    expect(await rowsOf(app, reseller.id)).toEqual({ clients: 0, issuedPasses: 0, debits: 0, outbox: 0, records: 0 });
  });

  it('a query (not a mutation) with a key › is unaffected: executes each time, stores nothing, leaves the key free', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const query = '{ passes(first: 5) { edges { node { id name } } } }';
    const first = await gql(app, reseller.key, query, {}, { idempotencyKey: key });
    const second = await gql(app, reseller.key, query, {}, { idempotencyKey: key });
    for (const r of [first, second]) {
      expectExecuted(r, 200);
      expect(r.body.data?.passes.edges).toEqual([{ node: { id: pass.id, name: pass.name } }]);
    }
    // Not even validated: a query never uses it.
    expectExecuted(await gql(app, reseller.key, query, {}, { idempotencyKey: 'k'.repeat(300) }), 200);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ records: 0 });
    // The key was never taken, so a mutation can still use it.
    expectExecuted(await issueGql(reseller, gqlInput(pass.id), key), 200);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ clients: 1, records: 1 });
  });

  it('a query selected by operationName from a document with a mutation › is not treated as a mutation', async () => {
    const { reseller, pass } = await prepaidReseller();
    const key = newKey();
    const doc = `${ISSUE}\nquery List { passes(first: 5) { edges { node { id } } } }`;
    const res = await call(app, '/graphql', {
      key: reseller.key,
      idempotencyKey: key,
      body: { query: doc, operationName: 'List', variables: {} },
      headers: { Accept: 'application/graphql-response+json' },
    });
    expectExecuted(res, 200);
    expect(res.body.data.passes.edges).toEqual([{ node: { id: pass.id } }]);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ clients: 0, records: 0 });
  });

  it('GET /graphql with a key, even an invalid one › ignores it', async () => {
    const { reseller, pass } = await prepaidReseller();
    const query = encodeURIComponent('{ passes(first: 5) { edges { node { id } } } }');
    const res = await call(app, `/graphql?query=${query}`, {
      key: reseller.key,
      idempotencyKey: 'k'.repeat(300),
      headers: { Accept: 'application/graphql-response+json' },
    });
    expectExecuted(res, 200);
    expect(res.body.data.passes.edges).toEqual([{ node: { id: pass.id } }]);
    expect(await rowsOf(app, reseller.id)).toMatchObject({ records: 0 });
  });
});
