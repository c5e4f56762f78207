import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import {
  businessLedger,
  clientBody,
  createPassPackage,
  createReseller,
  issuePass,
  walletLedger,
  type TestReseller,
} from '../support/factories.ts';
import { V3, v3, type Reply } from '../support/http.ts';
import { expectError, expectUnchanged, expectValidationError } from '../support/assertions.ts';
import { dbState } from '../support/db-state.ts';

const app = useApp();
let reseller: TestReseller;
let other: TestReseller;
let paygPassId: string;
let prepaidPassId: string;
let otherPassId: string;
/** A client of `reseller` on the PREPAID pass. */
let clientId: string;
/** A client of `other`. */
let otherClientId: string;

const UNKNOWN_PASS = 'pass_01JZZZZZZZZZZZZZZZZZZZZZZZ';
const UNKNOWN_CLIENT = 'client_01JZZZZZZZZZZZZZZZZZZZZZZZ';
const DAY = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

beforeAll(async () => {
  reseller = await createReseller(app, { balance: 10_000_000 });
  other = await createReseller(app, { name: 'Other Reseller', balance: 10_000_000 });
  paygPassId = (await createPassPackage(app, reseller, { paymentModel: 'PAYG' })).id;
  prepaidPassId = (await createPassPackage(app, reseller, { paymentModel: 'PREPAID', price: 1000 })).id;
  otherPassId = (await createPassPackage(app, other, { paymentModel: 'PREPAID' })).id;
  clientId = (await issuePass(app, reseller, prepaidPassId)).client_id;
  otherClientId = (await issuePass(app, other, otherPassId)).client_id;
});

/** Sends the request and checks it failed with a 400 naming `param`, and that nothing was written. */
async function expectRejected(send: () => Promise<Reply>, param: string): Promise<Reply> {
  const before = await dbState(app);
  const res = await send();
  expectValidationError(res, param);
  await expectUnchanged(app, before);
  return res;
}

const post = (path: string, body: unknown, key = reseller.key) => v3(app, path, { key, body });
const postRaw = (path: string, raw: string, contentType = 'application/json') =>
  v3(app, path, { key: reseller.key, method: 'POST', raw, headers: { 'Content-Type': contentType } });

describe('POST /issued_passes', () => {
  const cases: [string, () => Record<string, unknown>, string][] = [
    [
      'pass_id missing',
      () => {
        const { pass_id: _, ...b } = clientBody(paygPassId);
        return b;
      },
      'pass_id',
    ],
    [
      'first_name missing',
      () => {
        const { first_name: _, ...b } = clientBody(paygPassId);
        return b;
      },
      'first_name',
    ],
    [
      'last_name missing',
      () => {
        const { last_name: _, ...b } = clientBody(paygPassId);
        return b;
      },
      'last_name',
    ],
    [
      'email missing',
      () => {
        const { email: _, ...b } = clientBody(paygPassId);
        return b;
      },
      'email',
    ],
    ['pass_id a number', () => clientBody(paygPassId, { pass_id: 123 }), 'pass_id'],
    ['pass_id empty', () => clientBody(paygPassId, { pass_id: '' }), 'pass_id'],
    ['pass_id longer than 64', () => clientBody(paygPassId, { pass_id: `pass_${'A'.repeat(60)}` }), 'pass_id'],
    ['pass_id unknown', () => clientBody(UNKNOWN_PASS), 'pass_id'],
    ['pass_id with a NUL character', () => clientBody(`${paygPassId}\u0000`), 'pass_id'],
    ["pass_id of another reseller's package", () => clientBody(otherPassId), 'pass_id'],
    ['first_name a number', () => clientBody(paygPassId, { first_name: 42 }), 'first_name'],
    ['first_name null', () => clientBody(paygPassId, { first_name: null }), 'first_name'],
    ['first_name an object', () => clientBody(paygPassId, { first_name: { first: 'Ada' } }), 'first_name'],
    ['first_name empty', () => clientBody(paygPassId, { first_name: '' }), 'first_name'],
    ['first_name only spaces', () => clientBody(paygPassId, { first_name: '   ' }), 'first_name'],
    ['first_name over 100 characters', () => clientBody(paygPassId, { first_name: 'A'.repeat(101) }), 'first_name'],
    ['first_name with a NUL character', () => clientBody(paygPassId, { first_name: 'Ada\u0000' }), 'first_name'],
    ['last_name a boolean', () => clientBody(paygPassId, { last_name: true }), 'last_name'],
    ['last_name over 100 characters', () => clientBody(paygPassId, { last_name: 'L'.repeat(101) }), 'last_name'],
    ['email a number', () => clientBody(paygPassId, { email: 12345 }), 'email'],
    ['email without @', () => clientBody(paygPassId, { email: 'ada.example.com' }), 'email'],
    ['email without domain', () => clientBody(paygPassId, { email: 'ada@' }), 'email'],
    [
      'email over 254 characters',
      () => clientBody(paygPassId, { email: `${'a'.repeat(60)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com` }),
      'email',
    ],
    ['phone a number', () => clientBody(paygPassId, { phone: 5551234 }), 'phone'],
    ['phone with letters', () => clientBody(paygPassId, { phone: 'call me' }), 'phone'],
    ['phone over 32 characters', () => clientBody(paygPassId, { phone: '1'.repeat(33) }), 'phone'],
    ['external_id an array', () => clientBody(paygPassId, { external_id: ['x'] }), 'external_id'],
    ['external_id over 255 characters', () => clientBody(paygPassId, { external_id: 'x'.repeat(256) }), 'external_id'],
    ['external_id with a NUL character', () => clientBody(paygPassId, { external_id: 'crm\u00001' }), 'external_id'],
    ['start_date a number', () => clientBody(paygPassId, { start_date: 20270101 }), 'start_date'],
    ['start_date not a calendar date (2026-02-30)', () => clientBody(paygPassId, { start_date: '2026-02-30' }), 'start_date'],
    ['start_date with a two-digit year (26-01-01)', () => clientBody(paygPassId, { start_date: '26-01-01' }), 'start_date'],
    ['start_date without zero padding', () => clientBody(paygPassId, { start_date: '2027-1-1' }), 'start_date'],
    ['start_date as a timestamp string', () => clientBody(paygPassId, { start_date: '2027-01-01T00:00:00Z' }), 'start_date'],
    ['start_date yesterday', () => clientBody(paygPassId, { start_date: isoDay(app.clock.now().getTime() - DAY) }), 'start_date'],
    ['start_date years in the past', () => clientBody(paygPassId, { start_date: '2001-01-01' }), 'start_date'],
    [
      'start_date more than a year ahead',
      () => clientBody(paygPassId, { start_date: isoDay(app.clock.now().getTime() + 400 * DAY) }),
      'start_date',
    ],
    ['an unknown field', () => clientBody(paygPassId, { nickname: 'Ada' }), 'nickname'],
    ['a field the operator sets (payment_model)', () => clientBody(paygPassId, { payment_model: 'PREPAID' }), 'payment_model'],
    ['a field the service sets (status)', () => clientBody(paygPassId, { status: 'ACTIVE' }), 'status'],
  ];

  for (const [situation, body, param] of cases) {
    it(`${situation} › answers 400 validation_error on ${param} and writes nothing`, async () => {
      await expectRejected(() => post('/issued_passes', body()), param);
    });
  }

  it('wrong type › says what was expected rather than "missing"', async () => {
    const res = await expectRejected(() => post('/issued_passes', clientBody(paygPassId, { last_name: 7 })), 'last_name');
    expect(res.body.error.message).not.toMatch(/missing/i);
    expect(res.body.error.message).toMatch(/string/i);
  });

  it('missing field › says it is missing', async () => {
    const res = await expectRejected(() => post('/issued_passes', { pass_id: paygPassId, first_name: 'Ada', last_name: 'L' }), 'email');
    expect(res.body.error.message).toMatch(/missing/i);
  });

  it('values exactly at the limits › are accepted (201)', async () => {
    const res = await post(
      '/issued_passes',
      clientBody(paygPassId, {
        first_name: 'F'.repeat(100),
        last_name: 'L'.repeat(100),
        external_id: 'x'.repeat(255),
        phone: '+44 (20) 7946-0958',
        start_date: isoDay(app.clock.now().getTime() + 300 * DAY),
      }),
    );
    expect(res.status, res.text).toBe(201);
  });

  it('an empty body › names the first missing field', async () => {
    await expectRejected(() => v3(app, '/issued_passes', { key: reseller.key, method: 'POST' }), 'pass_id');
  });

  it('malformed JSON › answers 400 on body', async () => {
    await expectRejected(() => postRaw('/issued_passes', '{"pass_id": "x",'), 'body');
  });

  it('a JSON array › answers 400 on body', async () => {
    await expectRejected(() => post('/issued_passes', [clientBody(paygPassId)]), 'body');
  });

  it('JSON null, a string or a number › answers 400 on body', async () => {
    for (const raw of ['null', '"pass"', '42', 'true']) await expectRejected(() => postRaw('/issued_passes', raw), 'body');
  });

  it('a form-encoded body › answers 400 on Content-Type', async () => {
    await expectRejected(() => postRaw('/issued_passes', 'pass_id=x&first_name=Ada', 'application/x-www-form-urlencoded'), 'Content-Type');
  });

  it('JSON sent as text/plain › answers 400 on Content-Type', async () => {
    await expectRejected(() => postRaw('/issued_passes', JSON.stringify(clientBody(paygPassId)), 'text/plain'), 'Content-Type');
  });

  it('Content-Type with a charset › is accepted', async () => {
    const res = await postRaw('/issued_passes', JSON.stringify(clientBody(paygPassId)), 'application/json; charset=utf-8');
    expect(res.status, res.text).toBe(201);
  });

  it('an unknown query parameter › answers 400 naming it', async () => {
    await expectRejected(() => v3(app, '/issued_passes?dry_run=true', { key: reseller.key, body: clientBody(paygPassId) }), 'dry_run');
  });

  it('an Idempotency-Key over 255 characters › answers 400 on Idempotency-Key', async () => {
    await expectRejected(
      () => v3(app, '/issued_passes', { key: reseller.key, body: clientBody(paygPassId), idempotencyKey: 'k'.repeat(256) }),
      'Idempotency-Key',
    );
  });

  it('a body over 1 MiB › answers 413 body_too_large and writes nothing', async () => {
    const before = await dbState(app);
    const raw = JSON.stringify(clientBody(paygPassId, { external_id: 'x'.repeat(1024 * 1024) }));
    const res = await postRaw('/issued_passes', raw);
    expectError(res, 413, 'body_too_large');
    expect(res.body.error.type).toBe('invalid_request_error');
    await expectUnchanged(app, before);
  });

  it('a body of exactly 1 MiB › is read and validated (400, not 413)', async () => {
    const prefix = `${JSON.stringify(clientBody(paygPassId)).slice(0, -1)},"pad":"`;
    const raw = `${prefix}${'x'.repeat(1024 * 1024 - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(raw)).toBe(1024 * 1024);
    await expectRejected(() => postRaw('/issued_passes', raw), 'pad');
  });

  it('a chunked body over 1 MiB without Content-Length › answers 413 body_too_large', async () => {
    const before = await dbState(app);
    const { status, body, connection } = await postChunked('/issued_passes', 64 * 1024, 20);
    expect(status).toBe(413);
    expect(JSON.parse(body).error.code).toBe('body_too_large');
    // The rest of the body is never read: the connection cannot carry another request.
    expect(connection).toBe('close');
    await expectUnchanged(app, before);
  });
});

describe('POST /issued_passes/update', () => {
  const cases: [string, () => Record<string, unknown>, string][] = [
    ['client_id missing', () => ({ pass_id: paygPassId }), 'client_id'],
    ['pass_id missing', () => ({ client_id: clientId }), 'pass_id'],
    ['client_id a number', () => ({ client_id: 1, pass_id: paygPassId }), 'client_id'],
    ['client_id null', () => ({ client_id: null, pass_id: paygPassId }), 'client_id'],
    ['pass_id an object', () => ({ client_id: clientId, pass_id: { id: paygPassId } }), 'pass_id'],
    ['client_id empty', () => ({ client_id: '', pass_id: paygPassId }), 'client_id'],
    ['client_id longer than 64', () => ({ client_id: `client_${'A'.repeat(60)}`, pass_id: paygPassId }), 'client_id'],
    ['client_id unknown', () => ({ client_id: UNKNOWN_CLIENT, pass_id: paygPassId }), 'client_id'],
    ['client_id with a NUL character', () => ({ client_id: `${clientId}\u0000`, pass_id: paygPassId }), 'client_id'],
    ["client_id of another reseller's client", () => ({ client_id: otherClientId, pass_id: paygPassId }), 'client_id'],
    ['pass_id unknown', () => ({ client_id: clientId, pass_id: UNKNOWN_PASS }), 'pass_id'],
    ["pass_id of another reseller's package", () => ({ client_id: clientId, pass_id: otherPassId }), 'pass_id'],
    ['an unknown field', () => ({ client_id: clientId, pass_id: paygPassId, expires_at: 2_000_000_000 }), 'expires_at'],
  ];
  for (const [situation, body, param] of cases) {
    it(`${situation} › answers 400 validation_error on ${param} and writes nothing`, async () => {
      await expectRejected(() => post('/issued_passes/update', body()), param);
    });
  }

  it('malformed JSON › answers 400 on body', async () => {
    await expectRejected(() => postRaw('/issued_passes/update', '{client_id:'), 'body');
  });
  it('a JSON array › answers 400 on body', async () => {
    await expectRejected(() => post('/issued_passes/update', [{ client_id: clientId, pass_id: paygPassId }]), 'body');
  });
  it('wrong Content-Type › answers 400 on Content-Type', async () => {
    await expectRejected(
      () => postRaw('/issued_passes/update', JSON.stringify({ client_id: clientId, pass_id: paygPassId }), 'text/plain'),
      'Content-Type',
    );
  });
  it('a body over 1 MiB › answers 413 body_too_large', async () => {
    const before = await dbState(app);
    const res = await postRaw('/issued_passes/update', JSON.stringify({ client_id: clientId, pass_id: 'p'.repeat(1024 * 1024 + 1) }));
    expectError(res, 413, 'body_too_large');
    await expectUnchanged(app, before);
  });
});

describe('POST /issued_passes/{client_id}/expiry', () => {
  const future = () => Math.floor(app.clock.now().getTime() / 1000) + 30 * 86_400;
  const cases: [string, () => unknown, string][] = [
    ['expires_at missing', () => ({}), 'expires_at'],
    ['expires_at a date string', () => ({ expires_at: '2030-01-01' }), 'expires_at'],
    ['expires_at an ISO timestamp string', () => ({ expires_at: new Date(future() * 1000).toISOString() }), 'expires_at'],
    ['expires_at a numeric string', () => ({ expires_at: String(future()) }), 'expires_at'],
    ['expires_at with a fraction of a second', () => ({ expires_at: future() + 0.5 }), 'expires_at'],
    ['expires_at negative', () => ({ expires_at: -1 }), 'expires_at'],
    ['expires_at beyond year 9999', () => ({ expires_at: 253_402_300_800 }), 'expires_at'],
    ['expires_at null', () => ({ expires_at: null }), 'expires_at'],
    ['expires_at in the past', () => ({ expires_at: Math.floor(app.clock.now().getTime() / 1000) - 60 }), 'expires_at'],
    ['expires_at exactly now', () => ({ expires_at: Math.floor(app.clock.now().getTime() / 1000) }), 'expires_at'],
    ['an unknown field', () => ({ expires_at: future(), pass_id: paygPassId }), 'pass_id'],
  ];
  for (const [situation, body, param] of cases) {
    it(`${situation} › answers 400 validation_error on ${param} and writes nothing`, async () => {
      await expectRejected(() => post(`/issued_passes/${clientId}/expiry`, body()), param);
    });
  }

  it('expires_at before a future start date › answers 400 on expires_at', async () => {
    const start = isoDay(app.clock.now().getTime() + 10 * DAY);
    const issued = await issuePass(app, reseller, paygPassId, { start_date: start });
    const beforeStart = Math.floor(new Date(`${start}T00:00:00Z`).getTime() / 1000) - 3600;
    await expectRejected(() => post(`/issued_passes/${issued.client_id}/expiry`, { expires_at: beforeStart }), 'expires_at');
  });

  it('malformed JSON › answers 400 on body', async () => {
    await expectRejected(() => postRaw(`/issued_passes/${clientId}/expiry`, '{"expires_at": }'), 'body');
  });
  it('a JSON array › answers 400 on body', async () => {
    await expectRejected(() => post(`/issued_passes/${clientId}/expiry`, [future()]), 'body');
  });
  it('wrong Content-Type › answers 400 on Content-Type', async () => {
    await expectRejected(
      () => postRaw(`/issued_passes/${clientId}/expiry`, JSON.stringify({ expires_at: future() }), 'application/xml'),
      'Content-Type',
    );
  });
  it('a body over 1 MiB › answers 413 body_too_large', async () => {
    const before = await dbState(app);
    const res = await postRaw(`/issued_passes/${clientId}/expiry`, JSON.stringify({ expires_at: future(), pad: 'x'.repeat(1024 * 1024) }));
    expectError(res, 413, 'body_too_large');
    await expectUnchanged(app, before);
  });

  for (const [situation, id] of [
    ['an unknown client', UNKNOWN_CLIENT],
    ['a malformed client id', 'nobody'],
    ['a NUL client id', '%00'],
  ] as const) {
    it(`${situation} › answers 404 resource_not_found and writes nothing`, async () => {
      const before = await dbState(app);
      expectError(await post(`/issued_passes/${id}/expiry`, { expires_at: future() }), 404, 'resource_not_found');
      await expectUnchanged(app, before);
    });
  }

  it("another reseller's client › answers 404, never revealing it exists", async () => {
    const before = await dbState(app);
    expectError(await post(`/issued_passes/${otherClientId}/expiry`, { expires_at: future() }), 404, 'resource_not_found');
    await expectUnchanged(app, before);
  });
});

describe('POST /issued_passes/{client_id}/renew', () => {
  it('an unknown field › answers 400 naming it and debits nothing', async () => {
    await expectRejected(() => post(`/issued_passes/${clientId}/renew`, { months: 12 }), 'months');
  });
  it('malformed JSON › answers 400 on body', async () => {
    await expectRejected(() => postRaw(`/issued_passes/${clientId}/renew`, '{'), 'body');
  });
  it('a JSON array › answers 400 on body', async () => {
    await expectRejected(() => post(`/issued_passes/${clientId}/renew`, []), 'body');
  });
  it('wrong Content-Type › answers 400 on Content-Type', async () => {
    await expectRejected(() => postRaw(`/issued_passes/${clientId}/renew`, '{}', 'text/plain'), 'Content-Type');
  });
  it('a body over 1 MiB › answers 413 body_too_large and debits nothing', async () => {
    const before = await dbState(app);
    const res = await postRaw(`/issued_passes/${clientId}/renew`, JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }));
    expectError(res, 413, 'body_too_large');
    await expectUnchanged(app, before);
  });
  for (const [situation, id] of [
    ['an unknown client', UNKNOWN_CLIENT],
    ['a malformed client id', 'x'.repeat(300)],
    ['a NUL client id', '%00'],
  ] as const) {
    it(`${situation} › answers 404 resource_not_found and debits nothing`, async () => {
      const before = await dbState(app);
      expectError(await v3(app, `/issued_passes/${id}/renew`, { key: reseller.key, method: 'POST' }), 404, 'resource_not_found');
      await expectUnchanged(app, before);
    });
  }
  it("another reseller's client › answers 404 and debits neither reseller", async () => {
    const before = await dbState(app);
    expectError(await v3(app, `/issued_passes/${otherClientId}/renew`, { key: reseller.key, method: 'POST' }), 404, 'resource_not_found');
    await expectUnchanged(app, before);
  });
});

describe('GET /passes/{id}', () => {
  it('an own package › answers 200', async () => {
    const res = await v3(app, `/passes/${paygPassId}`, { key: reseller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'pass', id: paygPassId });
  });
  for (const [situation, id] of [
    ['an unknown id', UNKNOWN_PASS],
    ['a malformed id', 'not-a-pass'],
    ['a NUL id', '%00'],
    ['a percent-garbage id', '%E0%A4%A'],
  ] as const) {
    it(`${situation} › answers 404 resource_not_found`, async () => {
      expectError(await v3(app, `/passes/${id}`, { key: reseller.key }), 404, 'resource_not_found');
    });
  }
  it("another reseller's package › answers 404", async () => {
    expectError(await v3(app, `/passes/${otherPassId}`, { key: reseller.key }), 404, 'resource_not_found');
  });
  it('an unknown query parameter › answers 400 naming it', async () => {
    expectValidationError(await v3(app, `/passes/${paygPassId}?expand=providers`, { key: reseller.key }), 'expand');
  });
});

describe('GET /issued_passes/{client_id}', () => {
  for (const [situation, id] of [
    ['an unknown client', UNKNOWN_CLIENT],
    ['a malformed id', 'client_!'],
    ['a NUL id', '%00'],
  ] as const) {
    it(`${situation} › answers 404 resource_not_found`, async () => {
      expectError(await v3(app, `/issued_passes/${id}`, { key: reseller.key }), 404, 'resource_not_found');
    });
  }
  it("another reseller's client › answers 404", async () => {
    expectError(await v3(app, `/issued_passes/${otherClientId}`, { key: reseller.key }), 404, 'resource_not_found');
  });
  it('an unknown query parameter › answers 400 naming it', async () => {
    expectValidationError(await v3(app, `/issued_passes/${clientId}?status=ACTIVE`, { key: reseller.key }), 'status');
  });
});

describe('GET /clients/{client_id}', () => {
  for (const [situation, id] of [
    ['an unknown client', UNKNOWN_CLIENT],
    ['a SQL-looking id', "'%20or%201%3D1%20--"],
    ['a NUL id', '%00'],
  ] as const) {
    it(`${situation} › answers 404 resource_not_found`, async () => {
      expectError(await v3(app, `/clients/${id}`, { key: reseller.key }), 404, 'resource_not_found');
    });
  }
  it("another reseller's client › answers 404", async () => {
    expectError(await v3(app, `/clients/${otherClientId}`, { key: reseller.key }), 404, 'resource_not_found');
  });
  it('an unknown query parameter › answers 400 naming it', async () => {
    expectValidationError(await v3(app, `/clients/${clientId}?include=passes`, { key: reseller.key }), 'include');
  });
});

describe('odd inputs', () => {
  const oddValues: unknown[] = [
    null,
    true,
    0,
    -1,
    1.5,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    '\u0000',
    '\ud800',
    '😀'.repeat(300),
    "'; drop table client; --",
    "' or '1'='1",
    '%00',
    '../../etc/passwd',
    'x'.repeat(70_000),
    [],
    [1, 'a'],
    {},
    { $ne: null },
    { nested: { deeper: { deepest: [1, { a: null }] } } },
    '<script>alert(1)</script>',
    'NaN',
    '1e999',
  ];
  const oddPathIds = [
    '%00',
    '%FF',
    '%E0%A4%A',
    '%F0%9F%98%80',
    "'%20or%201%3D1",
    'null',
    'undefined',
    '..%2F..%2Fpasses',
    'x'.repeat(4000),
    'client_00000000000000000000000000',
    'CLIENT_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    '%20',
    '%2F',
  ];

  const expectNoServerError = (res: Reply, what: string) => {
    expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
    if (res.status >= 400) expect(res.body.error.request_id, what).toBe(res.headers.get('request-id'));
  };

  it('in every body field of every passes endpoint › never answer 5xx', async () => {
    const bodies: [string, Record<string, unknown>][] = [
      ['/issued_passes', clientBody(paygPassId)],
      ['/issued_passes/update', { client_id: clientId, pass_id: prepaidPassId }],
      [`/issued_passes/${clientId}/expiry`, { expires_at: Math.floor(app.clock.now().getTime() / 1000) + 86_400 * 40 }],
    ];
    for (const [path, valid] of bodies) {
      for (const field of [...Object.keys(valid), 'phone', 'external_id', 'start_date', 'surprise']) {
        for (const value of oddValues) {
          const res = await post(path, { ...valid, [field]: value });
          expectNoServerError(res, `${path} ${field}=${JSON.stringify(value)?.slice(0, 40)}`);
        }
      }
    }
    for (const value of oddValues) {
      expectNoServerError(
        await post(`/issued_passes/${clientId}/renew`, { reason: value }),
        `renew reason=${JSON.stringify(value)?.slice(0, 40)}`,
      );
    }
  });

  it('as whole bodies › never answer 5xx', async () => {
    const raws = [
      '',
      ' ',
      '{}',
      '[]',
      '[[[[[[[[[[]]]]]]]]]]',
      '{"a":',
      '\u0000',
      '{"pass_id":"\\u0000"}',
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      '1e99999',
      '"\\ud800"',
    ];
    for (const path of [
      '/issued_passes',
      '/issued_passes/update',
      `/issued_passes/${clientId}/expiry`,
      `/issued_passes/${clientId}/renew`,
    ]) {
      for (const raw of raws) expectNoServerError(await postRaw(path, raw), `${path} body ${raw.slice(0, 30)}`);
    }
  });

  it('as path ids › never answer 5xx', async () => {
    for (const id of oddPathIds) {
      for (const path of [`/passes/${id}`, `/issued_passes/${id}`, `/clients/${id}`]) {
        expectNoServerError(await v3(app, path, { key: reseller.key }), `GET ${path.slice(0, 60)}`);
      }
      expectNoServerError(await post(`/issued_passes/${id}/expiry`, { expires_at: 4_000_000_000 }), `expiry ${id.slice(0, 40)}`);
      expectNoServerError(await v3(app, `/issued_passes/${id}/renew`, { key: reseller.key, method: 'POST' }), `renew ${id.slice(0, 40)}`);
    }
  });

  it('after all of them › the ledgers still sum to the balances', async () => {
    expect((await businessLedger(app, reseller.id)).ledgerSum).toBe((await businessLedger(app, reseller.id)).balance);
    const clients = await app.sql<{ id: string }>('select id from client where reseller_id = ?', [reseller.id]);
    for (const { id } of clients) {
      const wallet = await walletLedger(app, id);
      expect(wallet.ledgerSum).toBe(wallet.balance);
    }
  });
});

/** POSTs `count` chunks of `size` bytes with chunked transfer encoding (no Content-Length). */
function postChunked(path: string, size: number, count: number): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    // A keep-alive client: the server, not the client, must be the one to close the connection.
    const agent = new http.Agent({ keepAlive: true });
    const req = http.request(
      `${app.baseUrl}${V3}${path}`,
      {
        method: 'POST',
        agent,
        headers: { Authorization: `Bearer ${reseller.key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => {
          agent.destroy();
          resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection });
        });
        res.on('error', reject);
      },
    );
    // The server answers and closes before reading everything: later writes may fail, harmlessly.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    const chunk = Buffer.alloc(size, 'x');
    let sent = 0;
    const writeMore = () => {
      while (sent < count) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', writeMore);
      }
      req.end();
    };
    writeMore();
  });
}
