import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configWith } from '../../src/config.ts';
import { masterKey, secretBox } from '../../src/platform/secrets.ts';
import { instanceIn } from '../support/bookings.ts';
import { v3 } from '../support/http.ts';
import {
  capturingLogger,
  codeIn,
  useLookupWorld,
  deliverMail,
  useAppWithLog,
  withToken,
  type LookupWorld,
  type TestSmtp,
} from '../support/lookups.ts';

// docs/partner-guide.md "Lookup", "E-mail", docs/operator-guide.md "Secrets at rest": the code and the token are kept only as hashes; the
// mail body is sealed while it waits and erased once delivered; neither they nor the client's
// e-mail reach the log or the lookup's answers.

const logged = capturingLogger('debug');
const app = useAppWithLog(logged, { now: new Date('2026-03-02T08:00:00Z') });
let w: LookupWorld;
let smtp: TestSmtp;
useLookupWorld(app, (world, server) => {
  w = world;
  smtp = server;
});

/** The code as a number of its own (a 6-digit run inside a longer number, a timestamp say, is not it). */
const standalone = (code: string) => new RegExp(`(?<![0-9])${code}(?![0-9])`);

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
/** The rows of the lookup's own tables and of what can carry a response or an event. */
async function lookupRows(): Promise<string> {
  const rows = await Promise.all(
    ['lookup', 'mail_message', 'outbox', 'idempotency_record', 'event'].map(async (t) =>
      (await app.sql<{ row: string }>(`select t::text as row from ${t} t`)).map((r) => r.row).join('\n'),
    ),
  );
  return rows.join('\n');
}

describe('at rest', () => {
  it('the code: a salted scrypt hash; the mail body: sealed while it waits, erased once sent; the token: SHA-256 only', async () => {
    const started = await v3(app, '/lookups', { key: w.requester.key, body: { issuer_id: w.issuer.id, client_id: w.client.id } });
    expect(started.status, started.text).toBe(201);
    const [lookup] = await app.sql<{ code_hash: string; token_hash: string | null }>(
      'select code_hash, token_hash from lookup where id = ?',
      [started.body.id],
    );
    expect(lookup.code_hash).toMatch(/^scrypt\$[\w-]{22}\$[\w-]{43}$/);
    expect(lookup.token_hash).toBeNull();
    const [mail] = await app.sql<{ sealed_body: string; to_address: string }>(
      'select sealed_body, to_address from mail_message order by id desc limit 1',
    );
    expect(mail.sealed_body).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    // Opened with the database's key, the sealed body is the message; its code is nowhere in the clear.
    const master = await masterKey(app.orm.em.fork(), configWith({ DATABASE_URL: app.databaseUrl }));
    const body = JSON.parse(secretBox(master, 'mail bodies').open(mail.sealed_body)) as { text: string; html: string };
    const code = /Your code: (\d{6})/.exec(body.text)![1];
    expect(await lookupRows()).not.toMatch(standalone(code));
    expect(await everyRow()).not.toContain(`Your code: ${code}`);

    await deliverMail(app, { SMTP_URL: smtp.url }, logged.log);
    expect(codeIn(smtp.received.at(-1)!)).toBe(code);
    const [sent] = await app.sql<{ sealed_body: string | null; status: string }>(
      'select sealed_body, status from mail_message order by id desc limit 1',
    );
    expect(sent).toEqual({ sealed_body: null, status: 'SENT' });

    const verified = await v3(app, `/lookups/${started.body.id}/verify`, { key: w.requester.key, body: { access_code: code } });
    expect(verified.status, verified.text).toBe(200);
    const token: string = verified.body.lookup_token;
    const [after] = await app.sql<{ token_hash: string }>('select token_hash from lookup where id = ?', [started.body.id]);
    expect(after.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    const all = await everyRow();
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(5));
    expect(all).not.toContain(`Your code: ${code}`);
    expect(await lookupRows()).not.toMatch(standalone(code));
  });
});

describe('in the log and in the answers', () => {
  it('a whole flow at debug level (start, a refused delivery, delivery, wrong and right codes, token use) logs no e-mail, code or token', async () => {
    logged.lines.length = 0;
    const started = await v3(app, '/lookups', { key: w.requester.key, body: { issuer_id: w.issuer.id, client_id: w.client.id } });
    expect(started.text).not.toMatch(/ada@example\.com|a\*\*\*|Ada|Lovelace/);
    smtp.mode = 'tempfail';
    try {
      await deliverMail(app, { SMTP_URL: smtp.url }, logged.log);
    } finally {
      smtp.mode = 'accept';
    }
    app.clock.advance(6_000);
    await deliverMail(app, { SMTP_URL: smtp.url }, logged.log);
    const code = codeIn(smtp.received.at(-1)!);
    const wrong = await v3(app, `/lookups/${started.body.id}/verify`, {
      key: w.requester.key,
      body: { access_code: code === '111111' ? '222222' : '111111' },
    });
    expect(wrong.status).toBe(400);
    const verified = await v3(app, `/lookups/${started.body.id}/verify`, { key: w.requester.key, body: { access_code: code } });
    const token: string = verified.body.lookup_token;
    expect(verified.text).not.toMatch(/ada@example\.com|a\*\*\*/);
    const booked = await v3(app, '/bookings/class', {
      headers: withToken(token),
      body: { class_instance_id: (await instanceIn(app, w.gym.classId, 30)).id, client_id: w.client.id },
    });
    expect(booked.status, booked.text).toBe(201);
    expect((await v3(app, `/clients/${w.client.id}`, { headers: withToken(token) })).status).toBe(200);
    expect((await v3(app, '/passes', { headers: withToken(token) })).status).toBe(403);

    const text = logged.text();
    expect(logged.lines.length).toBeGreaterThanOrEqual(8);
    expect(text).toContain('outbox handler failed; will retry');
    expect(text).toContain('mail sent');
    expect(text).not.toContain('ada@example.com');
    expect(text).not.toMatch(standalone(code));
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(5));
  });
});
