import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectUnchanged } from '../support/assertions.ts';
import { anotherClient } from '../support/bookings.ts';
import { dbState } from '../support/db-state.ts';
import { v3 } from '../support/http.ts';
import { createLookupWorld, lookUp, startSmtp, withToken, type LookupWorld, type TestSmtp } from '../support/lookups.ts';

// docs/partner-guide.md "Lookup": a lookup token makes access codes for its one client (POST /access-codes takes
// it), by client_id or by that client's passcode; any other client or passcode is 403, nothing written.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: LookupWorld;
let smtp: TestSmtp;
let token: string;
beforeAll(async () => {
  w = await createLookupWorld(app);
  smtp = await startSmtp();
  ({ token } = await lookUp(app, smtp, w.requester, w.issuer.id, w.client.id));
});
afterAll(async () => {
  await smtp?.close();
});

const passcodeOf = async (issuedPassId: string) =>
  (await app.sql<{ passcode: string }>('select passcode from issued_pass where id = ?', [issuedPassId]))[0].passcode;

describe('POST /access-codes with a lookup token', () => {
  it('for its client, by client_id or by its passcode (any case) › 201, the code the requester’s', async () => {
    for (const body of [
      { client_id: w.client.id, provider_id: w.gym.id },
      { pass_code: (await passcodeOf(w.client.issuedPassId)).toLowerCase() },
    ]) {
      const res = await v3(app, '/access-codes', { headers: withToken(token), body });
      expect(res.status, res.text).toBe(201);
      expect(res.body.object).toBe('access_code');
      const [row] = await app.sql<{ reseller_id: string; client_id: string }>(
        'select reseller_id, client_id from access_code where id = ?',
        [res.body.id],
      );
      expect(row).toEqual({ reseller_id: w.requester.id, client_id: w.client.id });
    }
  });

  it('another client, its passcode, or a passcode of no one › 403 permission_denied, nothing written', async () => {
    const sibling = await anotherClient(app, w, 'grace@example.com');
    const before = await dbState(app);
    for (const body of [{ client_id: sibling.id }, { pass_code: await passcodeOf(sibling.issuedPassId) }, { pass_code: 'ZZZZ9999' }]) {
      expectError(await v3(app, '/access-codes', { headers: withToken(token), body }), 403, 'permission_denied');
    }
    await expectUnchanged(app, before);
  });
});
