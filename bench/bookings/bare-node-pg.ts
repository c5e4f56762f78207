// Baseline of the bookings bench (bench/README.md "Bookings"): the three booking requests written
// by hand on node:http and `pg`, issuing the statements our server issues for them (see the
// statement table the bench prints with --verbose; the reads ours prepares are named here too), in
// the same transaction with the same locks, checks and inserts, the event and its outbox row, a
// confirm's business-account ledger row (its balance moved at COMMIT by the database's trigger, as
// ours) and, with an Idempotency-Key, the same idempotency record, written after them. The last
// writes go together as ours queues them (the spot, the booking, the session marked used, the event,
// its outbox row and the ledger row: one statement, the record's when there is one;
// src/db/engine/prepared-read.ts queueWrite). The API key is compared with the one key it was
// started with (a key-cache hit).
// Only the paths the bench exercises are written out (a covered pass with unlimited visits); a
// request that would need another path (a co-pay session, extra visits) is refused with a 409.
// Wall-clock helpers (a local time in the spa's zone) are imported from src/platform/time.ts.
import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { exitWithParent } from '../request-path/processes.ts';
// The baseline talks to PostgreSQL as the tuned engine does, so the bench compares like with like.
// eslint-disable-next-line no-restricted-imports
import { EdgesAlongClient, WITH_COMMIT } from '../../src/db/engine/edges-along.ts';
import { newId } from '../../src/platform/ids.ts';
import { localTimeOf, minutesOf, weekdayOf, zonedInstant } from '../../src/platform/time.ts';

exitWithParent();
const resellerId = process.env.BENCH_RESELLER_ID!;
const keyHash = process.env.BENCH_KEY_SHA256!;
// Its client sends BEGIN with the transaction's first statement and its last with COMMIT, and pipelines statements issued
// together, as ours does (src/db/engine/edges-along.ts).
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BENCH_POOL_MAX ?? 10),
  Client: EdgesAlongClient,
});
const V3 = '/v3/api/business/reseller';
const IDEMPOTENCY_TTL_MS = 90_000; // the server's default IDEMPOTENCY_TTL_SECONDS
const LOCK_TIMEOUT_MS = '10000'; // and IDEMPOTENCY_WAIT_MS

/** A 4xx answer: rolled back (with a key: then stored like ours). */
class Refusal extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
  get body() {
    return { error: { type: 'invalid_request_error', code: this.code, message: this.message } };
  }
}

interface Answer {
  status: number;
  body: unknown;
}
type Db = pg.PoolClient;

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
const ID = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
const LIVE = `('PENDING', 'CONFIRMED')`;

// ---- the transaction and the idempotency record ---------------------------------------------

/**
 * The use case's statements, then (with a key) the record that takes it, sent with COMMIT, which
 * applies a business-account ledger row (an overdraft fails it: 422, as ours). A refusal rolls back;
 * with a key its 4xx is stored in a transaction of its own (as ours).
 */
async function write(key: string | undefined, fingerprint: string, run: (db: Db, now: Date) => Promise<Answer>): Promise<Answer> {
  const db = await pool.connect();
  const now = new Date();
  try {
    await db.query('begin');
    queues.set(db, []);
    let answer: Answer;
    try {
      answer = await run(db, now);
      await (key === undefined ? sendQueued(db) : storeUnderKey(db, key, fingerprint, now, answer));
      await db.query('commit');
      return { status: answer.status, body: answer.body };
    } catch (err) {
      if (key !== undefined && isKeyHeld(err)) return await answerStored(db, key, fingerprint);
      const refusal = err instanceof Refusal ? err : refusalOf(err);
      if (!refusal) throw err;
      queues.set(db, []);
      await db.query('rollback');
      answer = { status: refusal.status, body: refusal.body };
      if (key === undefined) return answer;
    }
    try {
      await db.query('begin');
      await storeUnderKey(db, key, fingerprint, now, answer);
      await db.query('commit');
    } catch (err) {
      if (isKeyHeld(err)) return await answerStored(db, key, fingerprint);
      throw err;
    }
    return { status: answer.status, body: answer.body };
  } catch (err) {
    await db.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    queues.delete(db);
    db.release();
  }
}

/** A live record holds the key: what the record's statement raises then, at COMMIT (as ours: src/platform/idempotency.ts). */
const isKeyHeld = (err: unknown) =>
  (err as { code?: string }).code === '23505' && (err as { constraint?: string }).constraint === 'idempotency_record_pkey';

/** The balances' constraints the database checks as their ledger rows are applied (as ours: src/platform/errors.ts). */
function refusalOf(err: unknown): Refusal | undefined {
  const { code, constraint, message } = err as { code?: string; constraint?: string; message: string };
  if (code !== '23514') return undefined;
  if (constraint === 'client_credit_balance_not_negative') return new Refusal(400, 'insufficient_credits', message);
  if (constraint === 'business_account_balance_not_negative') return new Refusal(422, 'insufficient_balance', message);
  return undefined;
}

// The writes a booking queues (as ours), sent as the CTEs of the next statement that carries them
// (the idempotency record's) or on their own before COMMIT.
interface Queued {
  text: string;
  values: unknown[];
}
const queues = new WeakMap<Db, Queued[]>();
const queue = (db: Db, text: string, values: unknown[]) => {
  queues.get(db)!.push({ text, values });
};

/** `main` ($1 …) with the queued writes as its first CTEs, their parameters first. */
function carrying(db: Db, main: string, values: unknown[]): { text: string; values: unknown[] } {
  const queued = queues.get(db)!.splice(0);
  if (queued.length === 0) return { text: main, values };
  let offset = 0;
  const renumber = (text: string, by: number) => text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
  const ctes = queued.map((w, i) => {
    const cte = `queued_write_${i + 1} as (${renumber(w.text, offset)})`;
    offset += w.values.length;
    return cte;
  });
  const body = renumber(main, offset);
  const own = /^\s*with\s+/i.exec(body);
  return {
    text: own ? `with ${ctes.join(', ')}, ${body.slice(own[0].length)}` : `with ${ctes.join(', ')} ${body}`,
    values: [...queued.flatMap((w) => w.values), ...values],
  };
}

/** The queued writes on their own, sent with COMMIT (as ours): the last one the statement, the others its CTEs. */
async function sendQueued(db: Db): Promise<void> {
  const queued = queues.get(db)!;
  if (queued.length === 0) return;
  const last = queued.pop()!;
  const { text, values } = carrying(db, last.text, last.values);
  await db.query(prepared(WITH_COMMIT + text, values));
}

/**
 * The key is taken by the statement that stores the response, sent with COMMIT, its wait bounded by
 * lock_timeout, which it puts back; a live record holding the key fails it (as ours).
 */
async function storeUnderKey(db: Db, key: string, fingerprint: string, now: Date, answer: Answer): Promise<void> {
  const { text, values } = carrying(
    db,
    `with bound as materialized (
       select current_setting('lock_timeout') as before, set_config('lock_timeout', $1, true) as waiting
     ), stored as (
       insert into idempotency_record (reseller_id, key, fingerprint, created_at, status_code, response_body)
       select $2, $3, $4, $5, $6, to_jsonb($7::text) from bound
       on conflict (reseller_id, key) do update
         set fingerprint = excluded.fingerprint, created_at = excluded.created_at,
             status_code = excluded.status_code, response_body = excluded.response_body
         where idempotency_record.created_at < $8
       returning key
     )
     select coalesce((select set_config('lock_timeout', bound.before, true) from stored), idempotency_key_held()) as lock_timeout from bound`,
    [
      LOCK_TIMEOUT_MS,
      resellerId,
      key,
      fingerprint,
      now,
      answer.status,
      JSON.stringify(answer.body),
      new Date(now.getTime() - IDEMPOTENCY_TTL_MS),
    ],
  );
  await db.query(prepared(WITH_COMMIT + text, values));
}

/** Another request holds the key: roll back and answer its record. */
async function answerStored(db: Db, key: string, fingerprint: string): Promise<Answer> {
  await db.query('rollback');
  const {
    rows: [first],
  } = await db.query<{ fingerprint: string; status_code: number | null; response_text: string | null }>(
    `select fingerprint, status_code, response_body #>> '{}' as response_text from idempotency_record where reseller_id = $1 and key = $2`,
    [resellerId, key],
  );
  if (!first || first.status_code === null) return new Refusal(409, 'idempotency_request_in_progress', 'In progress');
  if (first.fingerprint !== fingerprint) return new Refusal(409, 'idempotency_key_reused', 'Key reused');
  return { status: first.status_code, body: JSON.parse(first.response_text ?? 'null') };
}

// ---- what every booking reads ----------------------------------------------------------------

interface Provider {
  id: string;
  name: string;
  category: string;
  tier: string;
  timezone: string;
  opening_hours: Record<string, { open: string; close: string }[]>;
  room_capacity: number;
}
interface Category {
  type: string;
  tiers: string[];
  visits_allowed: number | null;
}
interface Holder {
  client: { id: string; first_name: string; last_name: string };
  issuedPassId: string;
  expiresAt: Date;
  categories: Category[];
}
interface HolderInput {
  client_id?: string;
  user_pass_id?: string;
  first_name?: string;
  last_name?: string;
}

const PROVIDER_COLUMNS = 'p.id, p.name, p.category, p.tier, p.timezone, p.opening_hours, p.room_capacity';

/** The statements ours runs as named prepared statements (src/db/engine/prepared-read.ts), named here too. */
const prepared = (text: string, values: unknown[]) => ({
  name: `stmt_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`,
  text,
  values,
});

interface Service {
  id: string;
  name: string;
  duration_minutes: number;
  credits: string;
  copay_amount: string | null;
  currency: string;
}

/** The spa and the services asked for, in one statement that also locks the spa (as ours: src/modules/spa/spa.service.ts spaWithServices). */
async function spaWithServices(db: Db, id: string, ids: string[]): Promise<{ spa: Provider; services: Service[] }> {
  const { rows } = await db.query<Provider & { [K in keyof Service as `s_${K}`]: Service[K] | null }>(
    prepared(
      `select ${PROVIDER_COLUMNS}, s.id as s_id, s.name as s_name, s.duration_minutes as s_duration_minutes, s.credits as s_credits,
            s.copay_amount as s_copay_amount, s.currency as s_currency
       from provider p left join spa_service s on s.provider_id = p.id and s.id = any($1)
      where p.id = $2 for no key update of p`,
      [ids, id],
    ),
  );
  const spa = rows[0];
  if (!spa || spa.category !== 'SPA') throw new Refusal(404, 'resource_not_found', `No spa '${id}'`);
  const byId = new Map(
    rows
      .filter((r) => r.s_id !== null)
      .map((r) => [
        r.s_id!,
        {
          id: r.s_id!,
          name: r.s_name!,
          duration_minutes: r.s_duration_minutes!,
          credits: r.s_credits!,
          copay_amount: r.s_copay_amount,
          currency: r.s_currency!,
        },
      ]),
  );
  const services = ids.map((sid) => {
    const service = byId.get(sid);
    if (!service) throw new Refusal(400, 'validation_error', `No service '${sid}' at spa '${id}'`);
    return service;
  });
  return { spa, services };
}

/** The client and its current issued pass (by client_id) or the named issued pass (user_pass_id), ACTIVE until `startsAt`. */
async function holderOf(db: Db, input: HolderInput, startsAt: Date | undefined, now: Date): Promise<Holder> {
  let pass: { id: string; client_id: string; pass_id: string; status: string; expires_at: Date; categories: Category[] } | undefined;
  let client: Holder['client'] | undefined;
  if (input.user_pass_id !== undefined) {
    // The issued pass with its package and its client, in one statement (as ours: getOwnIssuedPass).
    const {
      rows: [row],
    } = await db.query<NonNullable<typeof pass> & { c_first_name: string; c_last_name: string }>(
      prepared(
        `select ip.id, ip.client_id, ip.pass_id, ip.status, ip.expires_at, pp.categories, c.first_name as c_first_name, c.last_name as c_last_name
         from issued_pass ip join pass_package pp on pp.id = ip.pass_id join client c on c.id = ip.client_id
        where ip.id = $1 and ip.reseller_id = $2 limit 1`,
        [input.user_pass_id, resellerId],
      ),
    );
    if (!row) throw new Refusal(404, 'resource_not_found', `No issued pass '${input.user_pass_id}'`);
    pass = row;
    client = { id: row.client_id, first_name: row.c_first_name, last_name: row.c_last_name };
  } else {
    // The client with its current issued pass and package, in one statement (as ours: getOwnClientWithCurrentPass).
    const {
      rows: [row],
    } = await db.query<
      Holder['client'] & {
        ip_id: string | null;
        ip_client_id: string;
        ip_pass_id: string;
        ip_status: string;
        ip_expires_at: Date;
        pp_categories: Category[];
      }
    >(
      prepared(
        `select c.id, c.first_name, c.last_name, ip.id as ip_id, ip.client_id as ip_client_id, ip.pass_id as ip_pass_id,
              ip.status as ip_status, ip.expires_at as ip_expires_at, pp.categories as pp_categories
         from client c
         left join lateral (select * from issued_pass where reseller_id = c.reseller_id and client_id = c.id order by id desc limit 1) ip on true
         left join pass_package pp on pp.id = ip.pass_id
        where c.id = $1 and c.reseller_id = $2`,
        [input.client_id, resellerId],
      ),
    );
    if (!row) throw new Refusal(400, 'validation_error', `No client '${input.client_id}'`);
    client = { id: row.id, first_name: row.first_name, last_name: row.last_name };
    pass =
      row.ip_id === null
        ? undefined
        : {
            id: row.ip_id,
            client_id: row.ip_client_id,
            pass_id: row.ip_pass_id,
            status: row.ip_status,
            expires_at: row.ip_expires_at,
            categories: row.pp_categories,
          };
    if (!pass) throw new Refusal(409, 'pass_not_active', 'The client holds no pass');
  }
  for (const [field, value, actual] of [
    ['first_name', input.first_name, client.first_name],
    ['last_name', input.last_name, client.last_name],
  ] as const) {
    if (value !== undefined && value.toLowerCase() !== actual.toLowerCase())
      throw new Refusal(400, 'validation_error', `${field} does not match`);
  }
  const status = pass.status === 'ACTIVE' && pass.expires_at.getTime() <= now.getTime() ? 'EXPIRED' : pass.status;
  if (status !== 'ACTIVE') throw new Refusal(409, 'pass_not_active', `The client's pass is ${status}`);
  if (startsAt && pass.expires_at.getTime() <= startsAt.getTime())
    throw new Refusal(409, 'pass_not_active', 'The pass expires before the appointment');
  return { client, issuedPassId: pass.id, expiresAt: pass.expires_at, categories: pass.categories };
}

const covers = (h: Holder, p: Provider) =>
  h.categories.some((c) => c.type === p.category && c.tiers.map((t) => t.toUpperCase()).includes(p.tier));

type Booked = { starts_at: Date; ends_at: Date }[];

/** Each spa's time zone and services' durations as last read, for the next booking's read ahead (as ours). */
const shapes = new Map<string, { timezone: string; minutes: Map<string, number> }>();

/** The spa's live appointments overlapping [from, to), bounded below too, as ours: an appointment lasts at most a day (25 hours). */
async function bookedBetween(db: Db, spaId: string, from: Date, to: Date): Promise<Booked> {
  const { rows } = await db.query<Booked[number]>(
    prepared(
      `select starts_at, ends_at from booking
      where provider_id = $1 and type = 'spa' and status in ${LIVE} and starts_at < $2 and starts_at > $3 and ends_at > $4`,
      [spaId, to, new Date(from.getTime() - 25 * 3600_000), from],
    ),
  );
  return rows;
}

/**
 * Under the spa's lock (taken by spaWithServices): a quarter-hour start inside opening hours, and a
 * room free for the whole appointment, counted over `booked` (the appointments overlapping it, read
 * after the lock: as ours, src/modules/spa/availability.ts spaSlotAt).
 */
function checkSlot(spa: Provider, date: string, time: string, startsAt: Date, endsAt: Date, now: Date, booked: Booked): void {
  const intervals = spa.opening_hours[weekdayOf(date)] ?? [];
  const start = minutesOf(time);
  const inside =
    start % 15 === 0 &&
    intervals.some(
      (i) =>
        minutesOf(i.open) <= start &&
        start < minutesOf(i.close) &&
        endsAt.getTime() <= (zonedInstant(date, i.close, spa.timezone)?.getTime() ?? 0),
    );
  if (!inside || intervals.length === 0) throw new Refusal(400, 'validation_error', `${time} is not a bookable start on ${date}`);
  const events: [number, number][] = [];
  for (const b of booked) {
    const a = Math.max(b.starts_at.getTime(), startsAt.getTime());
    const z = Math.min(b.ends_at.getTime(), endsAt.getTime());
    if (a < z) events.push([a, 1], [z, -1]);
  }
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let running = 0;
  let peak = 0;
  for (const [, d] of events) peak = Math.max(peak, (running += d));
  if (startsAt.getTime() <= now.getTime() || peak >= spa.room_capacity) throw new Refusal(409, 'slot_unavailable', 'No room free');
}

// ---- writes shared by the three --------------------------------------------------------------

interface NewBooking {
  id: string;
  clientId: string;
  issuedPassId: string;
  provider: Provider;
  type: 'spa' | 'class';
  classInstanceId: string | null;
  serviceIds: string[];
  serviceName: string;
  date: string;
  time: string;
  startsAt: Date;
  endsAt: Date;
  payment: 'PASS' | 'COPAY';
  visitsDeducted: number;
  visitPeriod: string | null;
  creditsCharged: number;
  copayAmount: number | null;
  currency: string;
  sessionId: string | null;
  at: Date;
}

function insertBooking(db: Db, b: NewBooking): Record<string, unknown> {
  queue(
    db,
    `insert into booking (id, reseller_id, client_id, issued_pass_id, provider_id, type, status, class_instance_id, service_ids, service_name,
       provider_name, local_date, local_time, starts_at, ends_at, payment, visits_deducted, visit_entitlement_id, visit_period, credits_charged,
       copay_amount, currency, session_id, rescheduled_from, rescheduled_to, refund, history, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, null, $17, $18, $19, $20, $21, null, null, null, $22, $23, $23)`,
    [
      b.id,
      resellerId,
      b.clientId,
      b.issuedPassId,
      b.provider.id,
      b.type,
      b.classInstanceId,
      JSON.stringify(b.serviceIds),
      b.serviceName,
      b.provider.name,
      b.date,
      b.time,
      b.startsAt,
      b.endsAt,
      b.payment,
      b.visitsDeducted,
      b.visitPeriod,
      b.creditsCharged,
      b.copayAmount,
      b.currency,
      b.sessionId,
      JSON.stringify([{ status: 'PENDING', at: b.at.toISOString() }]),
      b.at,
    ],
  );
  return {
    object: 'booking',
    id: b.id,
    status: 'PENDING',
    type: b.type,
    service_name: b.serviceName,
    provider_name: b.provider.name,
    date: b.date,
    time: b.time,
    scheduled_for: seconds(b.startsAt),
    created: seconds(b.at),
    message: 'Booking created; awaiting confirmation by the provider',
    client_id: b.clientId,
    provider_id: b.provider.id,
    ...(b.classInstanceId ? { class_instance_id: b.classInstanceId } : { service_ids: b.serviceIds }),
    visits_deducted: b.visitsDeducted,
    credits_charged: b.creditsCharged,
    ...(b.copayAmount !== null ? { copay_amount: b.copayAmount } : {}),
    currency: b.currency,
  };
}

function recordEvent(db: Db, type: string, object: unknown, requestId: string, key: string | undefined, at: Date): void {
  const event = {
    id: newId('event', at.getTime()),
    object: 'event',
    type,
    created: seconds(at),
    data: { object },
    request: { id: requestId, idempotency_key: key ?? null },
  };
  const payload = JSON.stringify(event);
  queue(db, 'insert into event (id, reseller_id, type, payload, created_at) values ($1, $2, $3, $4::json, $5)', [
    event.id,
    resellerId,
    type,
    payload,
    at,
  ]);
  queue(db, 'insert into outbox (topic, reseller_id, payload, created_at, available_at) values ($1, $2, $3::jsonb, $4, $4)', [
    'event',
    resellerId,
    payload,
    at,
  ]);
}

// ---- the three requests ----------------------------------------------------------------------

function holderInput(body: Record<string, unknown>): HolderInput {
  const input: HolderInput = {};
  for (const field of ['client_id', 'user_pass_id', 'first_name', 'last_name'] as const) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length === 0 || value.length > 255) throw new Refusal(400, 'validation_error', `Bad ${field}`);
    input[field] = value;
  }
  if (input.client_id === undefined && input.user_pass_id === undefined)
    throw new Refusal(400, 'validation_error', 'Send client_id or user_pass_id');
  if (input.client_id !== undefined && !ID('client').test(input.client_id)) throw new Refusal(400, 'validation_error', 'Bad client_id');
  if (input.user_pass_id !== undefined && !ID('ipass').test(input.user_pass_id))
    throw new Refusal(400, 'validation_error', 'Bad user_pass_id');
  return input;
}

function only(body: Record<string, unknown>, fields: string[]): void {
  const unknown = Object.keys(body).find((k) => !fields.includes(k));
  if (unknown !== undefined) throw new Refusal(400, 'validation_error', `Unknown field '${unknown}'`);
}

function bookClass(body: Record<string, unknown>, requestId: string, key: string | undefined) {
  only(body, ['class_instance_id', 'client_id', 'user_pass_id', 'first_name', 'last_name']);
  const instanceId = body.class_instance_id;
  if (typeof instanceId !== 'string' || !ID('ci').test(instanceId)) throw new Refusal(400, 'validation_error', 'Bad class_instance_id');
  const input = holderInput(body);
  if (input.client_id === undefined || input.user_pass_id !== undefined)
    throw new Refusal(409, 'not_in_baseline', 'The baseline names clients by client_id');
  return async (db: Db, now: Date): Promise<Answer> => {
    // The instance locked, with its class and provider, in one statement (as ours: lockClassInstance).
    const ciRead = db.query<
      {
        id: string;
        status: string;
        starts_at: Date;
        local_date: string;
        capacity: number;
        spots_taken: number;
        provider_id: string;
        class_name: string;
        duration_minutes: number;
      } & { [K in keyof Provider as `p_${K}`]: Provider[K] }
    >(
      prepared(
        `select ci.id, ci.status, ci.starts_at, ci.local_date::text as local_date, ci.capacity, ci.spots_taken,
              c.provider_id, c.name as class_name, c.duration_minutes,
              p.id as p_id, p.name as p_name, p.category as p_category, p.tier as p_tier, p.timezone as p_timezone,
              p.opening_hours as p_opening_hours, p.room_capacity as p_room_capacity
         from class_instance ci join class c on c.id = ci.class_id join provider p on p.id = c.provider_id
        where ci.id = $1 for no key update of ci`,
        [instanceId],
      ),
    );
    // The holder and the already-booked check issued with it, one round trip, in this order (as ours: readForBooking).
    const holderRead = holderOf(db, input, undefined, now);
    const mineRead = db.query<{ count: string }>(
      prepared(`select count(*) as count from booking where class_instance_id = $1 and client_id = $2 and status in ${LIVE}`, [
        instanceId,
        input.client_id!,
      ]),
    );
    const [ciR, holderR, mineR] = await Promise.allSettled([ciRead, holderRead, mineRead]);
    if (ciR.status === 'rejected') throw ciR.reason;
    const ci = ciR.value.rows[0];
    if (!ci) throw new Refusal(400, 'validation_error', `No class instance '${instanceId}'`);
    if (ci.status !== 'SCHEDULED' || ci.starts_at.getTime() <= now.getTime()) throw new Refusal(409, 'class_not_bookable', 'Not bookable');
    const provider: Provider = {
      id: ci.p_id,
      name: ci.p_name,
      category: ci.p_category,
      tier: ci.p_tier,
      timezone: ci.p_timezone,
      opening_hours: ci.p_opening_hours,
      room_capacity: ci.p_room_capacity,
    };
    if (holderR.status === 'rejected') throw holderR.reason;
    if (mineR.status === 'rejected') throw mineR.reason;
    const holder = holderR.value;
    if (holder.expiresAt.getTime() <= ci.starts_at.getTime())
      throw new Refusal(409, 'pass_not_active', 'The pass expires before the appointment');
    const mine = mineR.value.rows[0];
    if (Number(mine.count) > 0) throw new Refusal(409, 'already_booked', 'Already booked');
    if (ci.spots_taken >= ci.capacity) throw new Refusal(409, 'class_full', 'Full');
    if (!covers(holder, provider)) throw new Refusal(409, 'not_in_baseline', 'The baseline books covered classes only');
    const category = holder.categories.find((c) => c.type === provider.category)!;
    const id = newId('booking', now.getTime());
    const period = now.toISOString().slice(0, 7);
    // src/modules/passes/visits.ts takePassVisit of an unlimited pass: the counter and its ledger row, queued.
    if (category.visits_allowed !== null) throw new Refusal(409, 'not_in_baseline', 'The baseline books passes with unlimited visits only');
    queue(
      db,
      `update issued_pass set visits_used = (case when visits_period = $1 then visits_used else '{}'::jsonb end)
              || jsonb_build_object($2::text, (case when visits_period = $1 then coalesce((visits_used->>$2)::int, 0) else 0 end) + 1),
              visits_period = $1, updated_at = $3
        where id = $4`,
      [period, provider.category, now, holder.issuedPassId],
    );
    queue(
      db,
      `insert into visit_transaction (id, reseller_id, client_id, issued_pass_id, category, period, delta, reason, booking_id, access_code_id, created_at)
       select $1, ip.reseller_id, ip.client_id, ip.id, $2, $3, 1, 'BOOKING', $4, null, $5 from issued_pass ip where ip.id = $6`,
      [newId('visitTransaction', now.getTime()), provider.category, period, id, now, holder.issuedPassId],
    );
    // Checked free under the instance's lock; the table's CHECK refuses an overbooking all the same.
    queue(db, 'update class_instance set spots_taken = spots_taken + 1 where id = $1', [ci.id]);
    const time = localTimeOf(ci.starts_at, provider.timezone);
    const booking = insertBooking(db, {
      id,
      clientId: holder.client.id,
      issuedPassId: holder.issuedPassId,
      provider,
      type: 'class',
      classInstanceId: ci.id,
      serviceIds: [],
      serviceName: ci.class_name,
      date: ci.local_date,
      time,
      startsAt: ci.starts_at,
      endsAt: new Date(ci.starts_at.getTime() + ci.duration_minutes * 60_000),
      payment: 'PASS',
      visitsDeducted: 1,
      visitPeriod: period,
      creditsCharged: 0,
      copayAmount: null,
      currency: process.env.BENCH_CURRENCY!,
      sessionId: null,
      at: now,
    });
    recordEvent(db, 'booking.created', booking, requestId, key, now);
    return {
      status: 201,
      body: {
        object: 'class_booking_initiation',
        created: seconds(now),
        class_instance_id: ci.id,
        class_name: ci.class_name,
        provider_name: provider.name,
        date: ci.local_date,
        time,
        scheduled_for: seconds(ci.starts_at),
        currency: process.env.BENCH_CURRENCY!,
        copay_required: false,
        additional_visits_required: false,
        status: 'PENDING',
        message: 'Class booked',
        booking_id: id,
        visits_deducted: 1,
      },
    };
  };
}

function bookSpa(body: Record<string, unknown>, requestId: string, key: string | undefined) {
  only(body, ['date', 'time', 'spa_id', 'service_ids', 'client_id', 'user_pass_id', 'first_name', 'last_name']);
  const { date, time, spa_id: spaId, service_ids: serviceIds } = body;
  if (typeof date !== 'string' || !DATE.test(date)) throw new Refusal(400, 'validation_error', 'Bad date');
  if (typeof time !== 'string' || !TIME.test(time)) throw new Refusal(400, 'validation_error', 'Bad time');
  if (typeof spaId !== 'string' || !ID('prov').test(spaId)) throw new Refusal(400, 'validation_error', 'Bad spa_id');
  if (
    !Array.isArray(serviceIds) ||
    serviceIds.length === 0 ||
    serviceIds.length > 10 ||
    new Set(serviceIds).size !== serviceIds.length ||
    !serviceIds.every((s) => typeof s === 'string' && ID('svc').test(s))
  )
    throw new Refusal(400, 'validation_error', 'Bad service_ids');
  const input = holderInput(body);
  return async (db: Db, now: Date): Promise<Answer> => {
    // The client, then the spa locked as it is read, then (the spa seen before) the appointments at the
    // instants its remembered time zone and durations give, issued together: one round trip (as ours:
    // src/modules/bookings/book-spa.ts readAhead).
    const shape = shapes.get(spaId);
    const guess = shape && zonedInstant(date, time, shape.timezone);
    const minutes = shape && (serviceIds as string[]).reduce((m, id) => m + (shape.minutes.get(id) ?? Number.NaN), 0);
    const [held, asked, read] = await Promise.allSettled([
      holderOf(db, input, undefined, now),
      spaWithServices(db, spaId, serviceIds as string[]),
      guess && minutes !== undefined && !Number.isNaN(minutes)
        ? bookedBetween(db, spaId, guess, new Date(guess.getTime() + minutes * 60_000))
        : undefined,
    ]);
    if (held.status === 'rejected') throw held.reason;
    if (asked.status === 'rejected') throw asked.reason;
    if (read.status === 'rejected') throw read.reason;
    const [holder, { spa, services }] = [held.value, asked.value];
    shapes.set(spa.id, { timezone: spa.timezone, minutes: new Map(services.map((s) => [s.id, s.duration_minutes])) });
    const startsAt = zonedInstant(date, time, spa.timezone);
    if (!startsAt || startsAt.getTime() <= now.getTime()) throw new Refusal(400, 'validation_error', 'Bad time');
    const endsAt = new Date(startsAt.getTime() + services.reduce((m, s) => m + s.duration_minutes, 0) * 60_000);
    // The guess is used only when it holds the instants the spa gives now, as ours.
    const ahead =
      guess && minutes !== undefined && guess.getTime() <= startsAt.getTime() && endsAt.getTime() <= guess.getTime() + minutes * 60_000
        ? read.value
        : undefined;
    if (holder.expiresAt.getTime() <= startsAt.getTime())
      throw new Refusal(409, 'pass_not_active', 'The pass expires before the appointment');
    if (!covers(holder, spa)) throw new Refusal(409, 'not_in_baseline', 'The baseline books covered spas only');
    checkSlot(spa, date, time, startsAt, endsAt, now, ahead ?? (await bookedBetween(db, spa.id, startsAt, endsAt)));
    const id = newId('booking', now.getTime());
    const credits = services.reduce((c, s) => c + Number(s.credits), 0);
    const serviceName = services.map((s) => s.name).join(', ');
    // The wallet row, queued: the database's trigger moves the balance as it is inserted (as ours).
    if (credits > 0) {
      queue(
        db,
        `insert into credit_transaction (id, reseller_id, client_id, type, amount, description, booking_id, credit_purchase_id, created_at)
  values ($1, $2, $3, 'DEBIT', $4, $5, $6, $7, $8)`,
        [
          newId('creditTransaction', now.getTime()),
          resellerId,
          holder.client.id,
          credits,
          `Spa appointment at ${spa.name}: ${serviceName}`,
          id,
          null,
          now,
        ],
      );
    }
    const booking = insertBooking(db, {
      id,
      clientId: holder.client.id,
      issuedPassId: holder.issuedPassId,
      provider: spa,
      type: 'spa',
      classInstanceId: null,
      serviceIds: services.map((s) => s.id),
      serviceName,
      date,
      time,
      startsAt,
      endsAt,
      payment: 'PASS',
      visitsDeducted: 0,
      visitPeriod: null,
      creditsCharged: credits,
      copayAmount: null,
      currency: process.env.BENCH_CURRENCY!,
      sessionId: null,
      at: now,
    });
    recordEvent(db, 'booking.created', booking, requestId, key, now);
    return {
      status: 201,
      body: {
        object: 'spa_booking_initiation',
        date,
        time,
        created: seconds(now),
        currency: process.env.BENCH_CURRENCY!,
        service_name: serviceName,
        provider_name: spa.name,
        scheduled_for: seconds(startsAt),
        copay_required: false,
        status: 'PENDING',
        message: 'Spa appointment booked',
        booking_id: id,
      },
    };
  };
}

function confirmSpa(sessionId: string, requestId: string, key: string | undefined) {
  return async (db: Db, now: Date): Promise<Answer> => {
    // The session locked, with its issued pass, package and client and its spa (locked) with the
    // services it asks for, one row per service; right behind it, the appointments at the session's
    // instants, under the spa's lock: one round trip (as ours: lockOwnSpaSession, readBookedAheadOfSession).
    const wellFormed = ID('sess').test(sessionId);
    const [read, ahead] = await Promise.allSettled([
      wellFormed
        ? db.query<
            {
              id: string;
              client_id: string;
              issued_pass_id: string;
              provider_id: string;
              service_ids: string[];
              local_date: string;
              local_time: string;
              starts_at: Date;
              ends_at: Date;
              currency: string;
              copay_amount: string | null;
              status: string;
              booking_id: string | null;
              expires_at: Date;
              ip_id: string | null;
              ip_status: string;
              ip_expires_at: Date;
              pp_categories: Category[];
              c_id: string;
              c_first_name: string;
              c_last_name: string;
            } & Omit<Provider, 'id'> & { spa_id: string } & { [K in keyof Service as `s_${K}`]: Service[K] | null }
          >(
            prepared(
              `select bs.id, bs.client_id, bs.issued_pass_id, bs.provider_id, bs.service_ids, bs.local_date::text as local_date, bs.local_time,
                bs.starts_at, bs.ends_at, bs.currency, bs.copay_amount, bs.status, bs.booking_id, bs.expires_at,
                ip.id as ip_id, ip.status as ip_status, ip.expires_at as ip_expires_at, pp.categories as pp_categories,
                c.id as c_id, c.first_name as c_first_name, c.last_name as c_last_name,
                ${PROVIDER_COLUMNS.replace('p.id,', 'p.id as spa_id,')}, s.id as s_id, s.name as s_name, s.duration_minutes as s_duration_minutes,
                s.credits as s_credits, s.copay_amount as s_copay_amount, s.currency as s_currency
           from booking_session bs
           left join issued_pass ip on ip.id = bs.issued_pass_id and ip.reseller_id = $2
           left join pass_package pp on pp.id = ip.pass_id left join client c on c.id = ip.client_id
           join provider p on p.id = bs.provider_id
           left join spa_service s on s.provider_id = p.id and s.id in (select jsonb_array_elements_text(bs.service_ids))
          where bs.id = $1 and bs.reseller_id = $2 and bs.type = 'spa' for update of bs for no key update of p`,
              [sessionId, resellerId],
            ),
          )
        : { rows: [] },
      wellFormed
        ? db.query<Booked[number]>(
            prepared(
              `with s as (select provider_id, starts_at, ends_at from booking_session where id = $1 and reseller_id = $2 and type = 'spa')
         select starts_at, ends_at from booking
          where provider_id = (select provider_id from s) and type = 'spa' and status in ${LIVE}
            and starts_at < (select ends_at from s) and starts_at > (select starts_at from s) - $3::interval and ends_at > (select starts_at from s)`,
              [sessionId, resellerId, `${25 * 3600} seconds`],
            ),
          )
        : { rows: [] },
    ]);
    if (read.status === 'rejected') throw read.reason;
    if (ahead.status === 'rejected') throw ahead.reason;
    const rows = read.value.rows;
    const session = rows[0];
    if (!session) throw new Refusal(404, 'resource_not_found', `No spa booking session '${sessionId}'`);
    if (session.status === 'CONFIRMED') throw new Refusal(409, 'session_already_confirmed', 'Already confirmed');
    if (session.status === 'EXPIRED' || session.expires_at.getTime() <= now.getTime()) throw new Refusal(422, 'session_expired', 'Expired');
    if (session.ip_id === null) throw new Refusal(404, 'resource_not_found', `No issued pass '${session.issued_pass_id}'`);
    const passStatus = session.ip_status === 'ACTIVE' && session.ip_expires_at.getTime() <= now.getTime() ? 'EXPIRED' : session.ip_status;
    if (passStatus !== 'ACTIVE') throw new Refusal(409, 'pass_not_active', `The client's pass is ${passStatus}`);
    if (session.ip_expires_at.getTime() <= session.starts_at.getTime())
      throw new Refusal(409, 'pass_not_active', 'The pass expires before the appointment');
    const holder: Holder = {
      client: { id: session.c_id, first_name: session.c_first_name, last_name: session.c_last_name },
      issuedPassId: session.ip_id,
      expiresAt: session.ip_expires_at,
      categories: session.pp_categories,
    };
    const spa: Provider = {
      id: session.spa_id,
      name: session.name,
      category: session.category,
      tier: session.tier,
      timezone: session.timezone,
      opening_hours: session.opening_hours,
      room_capacity: session.room_capacity,
    };
    if (spa.category !== 'SPA') throw new Refusal(404, 'resource_not_found', `No spa '${session.provider_id}'`);
    const services = session.service_ids.map((sid) => {
      const r = rows.find((row) => row.s_id === sid);
      if (!r) throw new Refusal(400, 'validation_error', `No service '${sid}' at spa '${spa.id}'`);
      return {
        id: r.s_id!,
        name: r.s_name!,
        duration_minutes: r.s_duration_minutes!,
        credits: r.s_credits!,
        copay_amount: r.s_copay_amount,
        currency: r.s_currency!,
      };
    });
    checkSlot(spa, session.local_date, session.local_time, session.starts_at, session.ends_at, now, ahead.value.rows);
    const id = newId('booking', now.getTime());
    const copay = Number(session.copay_amount ?? 0);
    const booking = insertBooking(db, {
      id,
      clientId: holder.client.id,
      issuedPassId: holder.issuedPassId,
      provider: spa,
      type: 'spa',
      classInstanceId: null,
      serviceIds: services.map((s) => s.id),
      serviceName: services.map((s) => s.name).join(', '),
      date: session.local_date,
      time: session.local_time,
      startsAt: session.starts_at,
      endsAt: session.ends_at,
      payment: 'COPAY',
      visitsDeducted: 0,
      visitPeriod: null,
      creditsCharged: 0,
      copayAmount: copay,
      currency: session.currency.trim(),
      sessionId: session.id,
      at: now,
    });
    queue(db, `update booking_session set status = 'CONFIRMED', booking_id = $1, updated_at = $2 where id = $3`, [id, now, session.id]);
    recordEvent(db, 'booking.created', booking, requestId, key, now);
    // The ledger row; the database moves the business account at COMMIT, its row locked over COMMIT only.
    if (copay > 0) {
      queue(
        db,
        `insert into business_transaction (id, reseller_id, type, amount, description, reference_id, created_at) values ($1, $2, 'DEBIT', $3, $4, $5, $6)`,
        [newId('businessTransaction', now.getTime()), resellerId, copay, `Spa co-pay at ${spa.name} for ${session.client_id}`, id, now],
      );
    }
    return { status: 201, body: booking };
  };
}

// ---- HTTP ----------------------------------------------------------------------------------

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};

const CONFIRM = /^\/v3\/api\/business\/reseller\/bookings\/spa\/([^/]+)\/confirm$/;

async function handle(req: http.IncomingMessage, text: string): Promise<Answer> {
  const path = (req.url ?? '/').split('?')[0];
  const secret = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!secret || createHash('sha256').update(secret).digest('hex') !== keyHash)
    return { status: 401, body: { error: { code: 'invalid_api_key' } } };
  const key = req.headers['idempotency-key'] as string | undefined;
  if (key !== undefined && !/^[\x20-\x7E]{1,255}$/.test(key)) return new Refusal(400, 'validation_error', 'Bad Idempotency-Key');
  const requestId = newId('request');
  const fingerprint = createHash('sha256').update(`POST ${path} ${text}`).digest('hex');
  try {
    const confirm = CONFIRM.exec(path);
    if (confirm) {
      if (text.length > 0) throw new Refusal(400, 'validation_error', 'This operation takes no body');
      return await write(key, fingerprint, confirmSpa(decodeURIComponent(confirm[1]), requestId, key));
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Refusal(400, 'validation_error', 'Malformed JSON');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Refusal(400, 'validation_error', 'Expected an object');
    const fields = body as Record<string, unknown>;
    if (path === `${V3}/bookings/class`) return await write(key, fingerprint, bookClass(fields, requestId, key));
    if (path === `${V3}/bookings/spa`) return await write(key, fingerprint, bookSpa(fields, requestId, key));
    return { status: 404, body: { error: { code: 'not_found' } } };
  } catch (err) {
    if (err instanceof Refusal) return { status: err.status, body: err.body };
    throw err;
  }
}

http
  .createServer((req, res) => {
    if (req.method !== 'POST') return send(res, 405, { error: { code: 'method_not_allowed' } });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, Buffer.concat(chunks).toString('utf8')).then(
        (answer) => send(res, answer.status, answer.body),
        (err: Error) => send(res, 500, { error: { code: 'internal', message: err.message } }),
      );
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
