import { describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { anotherClient } from '../support/bookings.ts';
import {
  capturingLogger,
  codeIn,
  useLookupWorld,
  deliverMail,
  startLookup,
  startSmtp,
  type LookupWorld,
  type TestSmtp,
} from '../support/lookups.ts';

// docs/partner-guide.md "E-mail": mail leaves through the outbox to SMTP_URL; a failing server is retried with the
// outbox's backoff and the message delivered once when it recovers, with the same Message-ID; a
// message past its expiry is dropped; without SMTP_URL, development writes it to the log.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: LookupWorld;
let smtp: TestSmtp;
useLookupWorld(app, (world, server) => {
  w = world;
  smtp = server;
});

interface MailRow {
  status: string;
  erased: boolean;
  message_id: string | null;
  attempts: number;
  last_error: string | null;
  processed: boolean;
}
/** The newest mail message with its outbox row. */
async function newestMail(): Promise<MailRow> {
  const [row] = await app.sql<MailRow>(
    `select m.status, m.sealed_body is null as erased, m.message_id, o.attempts, o.last_error, o.processed_at is not null as processed
       from mail_message m join outbox o on o.topic = 'mail' and o.payload->>'mail_message_id' = m.id::text
      order by m.id desc limit 1`,
  );
  return row;
}
const messageIdOf = (raw: string) => /^Message-ID: (.+)$/im.exec(raw)?.[1].trim();

describe('SMTP delivery', () => {
  it('the server refuses for now (451) › retried after the outbox’s 5 s, delivered once when it accepts, same Message-ID', async () => {
    const client = await anotherClient(app, w, 'retry@example.com');
    await startLookup(app, w.requester, w.issuer.id, client.id);
    smtp.mode = 'tempfail';
    const received = smtp.received.length;
    const attempted = smtp.attempts.length;
    try {
      expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
      expect(await newestMail()).toMatchObject({ status: 'QUEUED', erased: false, attempts: 1, processed: false });
      // Only what failed is kept, never the server's words.
      expect((await newestMail()).last_error).toMatch(/^SMTP delivery failed \(.*451\)$/);
      // Not due yet: nothing is tried.
      expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(0);
      app.clock.advance(6_000);
      expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
      expect(await newestMail()).toMatchObject({ status: 'QUEUED', attempts: 2 });
    } finally {
      smtp.mode = 'accept';
    }
    // The second retry waits 5 minutes.
    app.clock.advance(301_000);
    expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
    expect(smtp.received.length).toBe(received + 1);
    const row = await newestMail();
    expect(row).toMatchObject({ status: 'SENT', erased: true, attempts: 3, processed: true });
    app.clock.advance(3_600_000);
    expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(0);
    expect(smtp.received.length).toBe(received + 1);
    // Three attempts, one Message-ID: the one recorded.
    const ids = smtp.attempts.slice(attempted).map(messageIdOf);
    expect(ids).toHaveLength(3);
    expect(new Set(ids)).toEqual(new Set([row.message_id]));
    expect(smtp.received.at(-1)!.to).toEqual(['retry@example.com']);
  });

  it('the server is down › retried; delivered once when it is back', async () => {
    const client = await anotherClient(app, w, 'down@example.com');
    const down = await startSmtp();
    const port = down.port;
    await down.close();
    await startLookup(app, w.requester, w.issuer.id, client.id);
    const url = `smtp://127.0.0.1:${port}`;
    expect(await deliverMail(app, { SMTP_URL: url })).toBe(1);
    expect(await newestMail()).toMatchObject({ status: 'QUEUED', attempts: 1, processed: false });
    expect((await newestMail()).last_error).toMatch(/^SMTP delivery failed \(/);
    const back = await startSmtp(port);
    try {
      app.clock.advance(6_000);
      expect(await deliverMail(app, { SMTP_URL: url })).toBe(1);
      app.clock.advance(3_600_000);
      expect(await deliverMail(app, { SMTP_URL: url })).toBe(0);
      expect(back.received).toHaveLength(1);
      expect(back.received[0].to).toEqual(['down@example.com']);
      expect(codeIn(back.received[0])).toMatch(/^\d{6}$/);
      expect(await newestMail()).toMatchObject({ status: 'SENT', erased: true, processed: true });
    } finally {
      await back.close();
    }
  });

  it('still undelivered when its code expires › dropped, never sent, body erased', async () => {
    const client = await anotherClient(app, w, 'dropped@example.com');
    await startLookup(app, w.requester, w.issuer.id, client.id);
    smtp.mode = 'permfail';
    try {
      expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
    } finally {
      smtp.mode = 'accept';
    }
    const received = smtp.received.length;
    app.clock.advance(16 * 60_000);
    expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
    expect(await newestMail()).toMatchObject({ status: 'EXPIRED', erased: true, processed: true, message_id: null });
    expect(smtp.received.length).toBe(received);
  });
});

describe('without SMTP_URL', () => {
  it('in development › the message (code included) is written to the log instead, and its body erased', async () => {
    const client = await anotherClient(app, w, 'dev@example.com');
    await startLookup(app, w.requester, w.issuer.id, client.id);
    const logged = capturingLogger('info');
    expect(await deliverMail(app, { SMTP_URL: undefined, NODE_ENV: 'development' }, logged.log)).toBe(1);
    const line = JSON.parse(logged.lines.find((l) => l.includes('SMTP_URL is not set (development)'))!);
    expect(line.mail).toMatchObject({ to: 'dev@example.com', subject: 'Your code for Requesting Reseller' });
    expect(line.mail.text).toMatch(/Your code: \d{6}\n/);
    expect(await newestMail()).toMatchObject({ status: 'LOGGED', erased: true, processed: true });
  });

  it('in test or production › not delivered: it waits in the outbox, sealed, until SMTP_URL is set', async () => {
    const client = await anotherClient(app, w, 'wait@example.com');
    await startLookup(app, w.requester, w.issuer.id, client.id);
    const logged = capturingLogger('info');
    expect(await deliverMail(app, { SMTP_URL: undefined, NODE_ENV: 'test' }, logged.log)).toBe(1);
    expect(await newestMail()).toMatchObject({ status: 'QUEUED', erased: false, attempts: 1, processed: false });
    expect((await newestMail()).last_error).toMatch(/^SMTP_URL is not set/);
    expect(logged.text()).not.toMatch(/Your code|wait@example\.com/);
    app.clock.advance(6_000);
    expect(await deliverMail(app, { SMTP_URL: smtp.url })).toBe(1);
    expect(smtp.received.at(-1)!.to).toEqual(['wait@example.com']);
  });
});
