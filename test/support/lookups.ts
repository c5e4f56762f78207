import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { MikroORM } from '@mikro-orm/postgresql';
import { SMTPServer } from 'smtp-server';
import PostalMime, { type Email } from 'postal-mime';
import { pino } from 'pino';
import { configWith, type Config } from '../../src/config.ts';
import { createDatabaseIfMissing } from '../../src/db/embedded.ts';
import { ormOptions } from '../../src/db/orm.ts';
import { buildServer, warmUp } from '../../src/server.ts';
import { ManualClock, type Clock } from '../../src/platform/clock.ts';
import type { Logger } from '../../src/platform/logger.ts';
import { dispatchOnce } from '../../src/platform/outbox.ts';
import { MAIL_TOPIC, mailHandler } from '../../src/modules/mail/index.ts';
import { UNLIMITED, type TestApp } from './app.ts';
import { withDatabase } from './global-setup.ts';
import { registerDbTable } from './db-state.ts';
import { createReseller, type TestReseller } from './factories.ts';
import { createBookingWorld, type BookingWorld } from './bookings.ts';
import { gql, v3 } from './http.ts';

// Lookups with real mail (docs/partner-guide.md "Lookup", "E-mail"): an SMTP server in-process on 127.0.0.1, the
// outbox's mail handler run against it, and the received messages parsed back.

registerDbTable('lookup', 'select id, status, attempts_remaining, token_hash from lookup order by id');
registerDbTable('mail_message', 'select id, status, sealed_body is null as erased from mail_message order by id');

export interface ReceivedMail {
  raw: string;
  parsed: Email;
  to: string[];
}

/** How the server answers DATA: accept, or refuse for now (451) or for good (554). */
export type SmtpMode = 'accept' | 'tempfail' | 'permfail';

/** `received`: the messages accepted; `attempts`: every message sent, refused ones too (raw). */
export interface TestSmtp {
  url: string;
  port: number;
  received: ReceivedMail[];
  attempts: string[];
  mode: SmtpMode;
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 (port 0 unless given), without TLS or AUTH, keeping what it receives. */
export async function startSmtp(port = 0): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const attempts: string[] = [];
  const state = { mode: 'accept' as SmtpMode };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        attempts.push(Buffer.concat(chunks).toString('utf8'));
        if (state.mode !== 'accept') {
          const err = Object.assign(new Error(state.mode === 'tempfail' ? 'Try again later' : 'Rejected'), {
            responseCode: state.mode === 'tempfail' ? 451 : 554,
          });
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        PostalMime.parse(raw).then((parsed) => {
          received.push({ raw, parsed, to: session.envelope.rcptTo.map((r) => r.address) });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${actual}`,
    port: actual,
    received,
    attempts,
    get mode() {
      return state.mode;
    },
    set mode(m: SmtpMode) {
      state.mode = m;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A logger that keeps every line it writes (for asserting what reaches the log). */
export function capturingLogger(level = 'debug'): { log: Logger; lines: string[]; text(): string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level, base: undefined }, stream), lines, text: () => lines.join('') };
}

/**
 * Runs the outbox's mail delivery once, as `serve`/`worker` do, with the app's clock and a config of
 * the app's database plus `overrides` (SMTP_URL, NODE_ENV …). Returns how many rows it handled.
 */
export function deliverMail(
  app: TestApp,
  overrides: Record<string, string | undefined>,
  log: Logger = pino({ level: 'silent' }),
): Promise<number> {
  const config: Config = configWith({ DATABASE_URL: app.databaseUrl, ...overrides });
  return dispatchOnce(app.orm, { [MAIL_TOPIC]: mailHandler({ config, clock: app.clock as Clock, log }) }, app.clock, log);
}

/** The 6-digit code of a lookup e-mail. */
export function codeIn(mail: ReceivedMail): string {
  const match = /Your code: (\d{6})\b/.exec(mail.parsed.text ?? '');
  if (!match) throw new Error(`no code in the mail:\n${mail.parsed.text}`);
  return match[1];
}

export async function setLookup(app: TestApp, reseller: TestReseller, enabled: boolean): Promise<void> {
  const res = await v3(app, '/settings/lookup', { key: reseller.key, body: { enabled } });
  if (res.status !== 200) throw new Error(`POST /settings/lookup: ${res.status} ${res.text}`);
}

/**
 * An issuer (the booking world's reseller, lookup enabled) with its client holding a pass, and a
 * funded requester that will look the client up.
 */
export interface LookupWorld extends BookingWorld {
  issuer: TestReseller;
  requester: TestReseller;
}

export async function createLookupWorld(app: TestApp, opts: { balance?: number } = {}): Promise<LookupWorld> {
  const world = await createBookingWorld(app);
  await setLookup(app, world.reseller, true);
  const requester = await createReseller(app, { name: 'Requesting Reseller', balance: opts.balance ?? 1_000_000 });
  return { ...world, issuer: world.reseller, requester };
}

/**
 * One line at the top of a lookup test file (after useApp): the lookup world and a real SMTP server
 * are made before its tests and handed to `use`; the server closes after them.
 */
export function useLookupWorld(app: TestApp, use: (world: LookupWorld, smtp: TestSmtp) => void): void {
  let smtp: TestSmtp | undefined;
  beforeAll(async () => {
    const world = await createLookupWorld(app);
    smtp = await startSmtp();
    use(world, smtp);
  });
  afterAll(async () => {
    await smtp?.close();
  });
}

/** Starts a lookup over REST; fails the test unless it is 201. */
export async function startLookup(app: TestApp, requester: TestReseller, issuerId: string, clientId: string) {
  const res = await v3(app, '/lookups', { key: requester.key, body: { issuer_id: issuerId, client_id: clientId } });
  if (res.status !== 201) throw new Error(`POST /lookups: ${res.status} ${res.text}`);
  return res.body as { id: string; status: string; expires_at: number };
}

/**
 * The whole flow for one client: start, deliver the mail to `smtp`, read the code, verify. Returns
 * the token and the lookup id.
 */
export async function lookUp(app: TestApp, smtp: TestSmtp, requester: TestReseller, issuerId: string, clientId: string) {
  const lookup = await startLookup(app, requester, issuerId, clientId);
  const before = smtp.received.length;
  await deliverMail(app, { SMTP_URL: smtp.url });
  const mail = smtp.received[before];
  if (!mail) throw new Error('the lookup mail did not arrive');
  const res = await v3(app, `/lookups/${lookup.id}/verify`, { key: requester.key, body: { access_code: codeIn(mail) } });
  if (res.status !== 200) throw new Error(`verify: ${res.status} ${res.text}`);
  return { lookupId: lookup.id, token: res.body.lookup_token as string, mail };
}

/** Headers of a token caller, with or without a bearer key. */
export const withToken = (token: string, extra: Record<string, string> = {}) => ({ 'Service-Lookup-Token': token, ...extra });

/** A GraphQL operation with a lookup token (and no bearer unless `key`). */
export function gqlWithToken<T = any>(app: TestApp, token: string, query: string, variables: Record<string, unknown> = {}, key?: string) {
  return gql<T>(app, key, query, variables, { headers: withToken(token) });
}

/**
 * useApp with the app's log kept (`logged.text()`): the server, its requests and the mail handler
 * (deliverMail with `logged.log`) write to it, at debug level unless told otherwise.
 */
export function useAppWithLog(logged: ReturnType<typeof capturingLogger>, { now }: { now: Date }): TestApp {
  let started: TestApp | undefined;
  beforeAll(async () => {
    const database = `${inject('runPrefix')}${randomBytes(5).toString('hex')}`;
    await createDatabaseIfMissing(inject('adminUrl'), database, inject('templateDatabase'));
    const databaseUrl = withDatabase(inject('adminUrl'), database);
    const config = configWith({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'debug', ...UNLIMITED });
    const orm = await MikroORM.init(ormOptions(databaseUrl, config.DB_POOL_MAX, logged.log));
    const clock = new ManualClock(now);
    await warmUp({ orm, config, log: logged.log });
    const server: http.Server = buildServer({ orm, config, clock, log: logged.log });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    started = {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      orm,
      clock,
      config,
      databaseUrl,
      sql: (query, params = []) => orm.em.fork().execute(query, params as unknown[]),
      async close() {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        await orm.close();
      },
    };
  });
  afterEach(() => {
    started?.clock.set(now);
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as TestApp, {
    get(_, prop) {
      if (!started) throw new Error('useAppWithLog(): the app is used before beforeAll started it');
      const value = Reflect.get(started, prop, started);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}
