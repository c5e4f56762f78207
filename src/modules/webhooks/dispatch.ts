import http from 'node:http';
import https from 'node:https';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { systemClock, unixSeconds, type Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import type { OutboxHandler } from '../../platform/outbox.ts';
import type { WebhookFailure, WebhookMetrics, WebhookOutcome } from '../../platform/metrics.ts';
import type { DomainEvent } from '../events/index.ts';
import { newDeliveryId } from './deliveries.ts';
import { secretsBox, signature } from './signing.ts';
import { guardedLookup, refusedTarget } from './urls.ts';
import { advisoryXactLock, autocommitWrite, preparedRead, preparedWrite, withTransaction } from '../../db/engine/index.ts';

// Delivery, at least once (docs/partner-guide.md "Webhooks"):
// 1. recordEvent writes the event and its outbox row with the use case's effects (one commit).
// 2. The outbox handler of topic `event` fans it out, in the outbox claim's transaction, to one
//    PENDING webhook_delivery per ENABLED endpoint of the reseller subscribed to its type: the
//    outbox row is done only when those rows are committed.
// 3. The delivery loop claims due deliveries per endpoint in turn (claimDue), with FOR UPDATE SKIP
//    LOCKED and a lease (locked_until) in one committed statement, at most 4 under way per
//    endpoint, then POSTs them concurrently with no transaction open; the
//    outcome is written afterwards. A worker that dies mid-attempt leaves its lease to run out, and
//    another worker takes the delivery again: the receiver may see an event twice (same
//    `webhook-id`), never zero times.

export interface DeliveryDeps {
  clock: Clock;
  config: Config;
  log: Logger;
  /** Where each attempt's outcome and duration are counted (src/cli/serve.ts gives the process's /metrics sink). */
  metrics?: WebhookMetrics;
}

/** After attempt n (1-based) fails, the next one is due this many seconds later (±10 %); after the last, FAILED. */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000];
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;

/** How long a claimed delivery is left to its worker: the timeout twice over plus 10 s (30 s by default). */
export const leaseMs = (config: Config): number => 2 * config.WEBHOOK_TIMEOUT_MS + 10_000;

/** The delay before attempt `attempts + 1`, with ±10 % jitter so retries of many deliveries spread out. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = RETRY_SCHEDULE_SECONDS[Math.min(attempts, RETRY_SCHEDULE_SECONDS.length) - 1] * 1000;
  return Math.round(base * (0.9 + 0.2 * random()));
}

/** The outbox handler of topic `event` (src/cli/serve.ts registers it wherever background jobs run). */
export function webhookFanOut(deps: DeliveryDeps): OutboxHandler {
  return async (row, em) => {
    const event = row.payload as DomainEvent;
    if (row.reseller_id === null || typeof event?.id !== 'string') return;
    // Endpoints created after the event do not get it; `["*"]` matches every type.
    const endpoints = await preparedRead<{ id: string }>(
      em,
      `select w.id from webhook_endpoint w
        where w.reseller_id = ? and w.status = 'ENABLED'
          and w.created_at <= (select created_at from event where id = ?)
          and (w.enabled_events @> '["*"]'::jsonb or w.enabled_events @> ?::jsonb)
        order by w.id`,
      [row.reseller_id, event.id, JSON.stringify([event.type])],
    );
    if (endpoints.length === 0) return;
    const now = deps.clock.now();
    deps.log.debug({ event_id: event.id, type: event.type, endpoints: endpoints.length }, 'event queued for webhook endpoints');
    await preparedWrite(
      em,
      `insert into webhook_delivery (id, reseller_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       values ${endpoints.map(() => "(?, ?, ?, ?, ?, 'PENDING', 0, ?, ?, ?)").join(', ')}
       on conflict (endpoint_id, event_id) do nothing`,
      endpoints.flatMap((e) => [newDeliveryId(now), row.reseller_id, e.id, event.id, event.type, now, now, now]),
    );
  };
}

interface Claimed {
  id: string;
  attempts: number;
  event_id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
}

/** What one attempt came to: a response status, or an error before one (timeout, refused, unreachable). */
interface Outcome {
  status?: number;
  error?: string;
}

/** Attempts under way at once for one endpoint, across every process: a slow endpoint holds only these. */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4;
/** Attempts one process runs at once; the background loop claims no more than this. */
export const MAX_IN_FLIGHT = 64;

/**
 * Claims up to `batch` due deliveries fairly and leases them, committed before any is sent (no
 * transaction stays open while receivers answer). Endpoints are taken in turn, one delivery each
 * per round: those with fewest attempts under way first, then the one served longest ago, each
 * giving at most what its MAX_IN_FLIGHT_PER_ENDPOINT leaves (leased rows are the attempts under
 * way). So one endpoint's backlog never stands in front of another endpoint's due delivery.
 */
async function claimDue(em: EntityManager, now: Date, config: Config, batch: number): Promise<Claimed[]> {
  // Claims run one at a time across processes (a short transaction-scoped lock), so each counts
  // the leases the one before it committed: the per-endpoint cap holds however many workers run.
  return withTransaction(em, async (tx) => {
    await advisoryXactLock(tx, 'webhook_delivery:claim');
    return claimStatement(tx, now, config, batch);
  });
}

function claimStatement(em: EntityManager, now: Date, config: Config, batch: number): Promise<Claimed[]> {
  return preparedWrite<Claimed>(
    em,
    `with ep as (
       select w.id, f.in_flight, row_number() over (order by f.in_flight, w.last_claimed_at nulls first, w.id) as turn
         from webhook_endpoint w
         cross join lateral (select count(*)::int as in_flight from webhook_delivery l
                              where l.endpoint_id = w.id and l.status = 'PENDING' and l.locked_until is not null and l.locked_until > ?) f
        where f.in_flight < ?
          and exists (select 1 from webhook_delivery x
                       where x.endpoint_id = w.id and x.status = 'PENDING' and x.next_attempt_at <= ?
                         and (x.locked_until is null or x.locked_until <= ?))
        order by f.in_flight, w.last_claimed_at nulls first, w.id
        limit ?
     ), due as (
       select c.id, c.endpoint_id from ep
        cross join lateral (
          select s.id, s.endpoint_id, row_number() over (order by s.next_attempt_at, s.id) as rank
            from (select d.id, d.endpoint_id, d.next_attempt_at from webhook_delivery d
                   where d.endpoint_id = ep.id and d.status = 'PENDING' and d.next_attempt_at <= ?
                     and (d.locked_until is null or d.locked_until <= ?)
                   order by d.next_attempt_at, d.id
                   limit ? - ep.in_flight
                   for update skip locked) s) c
        order by c.rank, ep.turn
        limit ?
     ), served as (
       -- SKIP LOCKED: two claims never wait on each other's endpoints (nor deadlock); a skipped
       -- endpoint keeps its place in turn one round longer.
       update webhook_endpoint w set last_claimed_at = ?
        where w.id in (select e.id from webhook_endpoint e where e.id in (select endpoint_id from due) order by e.id for update skip locked)
     )
     update webhook_delivery d
        set locked_until = ?, attempts = d.attempts + 1, updated_at = ?
       from due, webhook_endpoint w, event ev
      where d.id = due.id and w.id = d.endpoint_id and ev.id = d.event_id
     returning d.id, d.attempts, d.event_id, d.endpoint_id, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at,
               ev.payload::text as body`,
    [
      now,
      MAX_IN_FLIGHT_PER_ENDPOINT,
      now,
      now,
      batch,
      now,
      now,
      MAX_IN_FLIGHT_PER_ENDPOINT,
      batch,
      now,
      new Date(now.getTime() + leaseMs(config)),
      now,
    ],
  );
}

/** Sends one claimed delivery, signed with every live secret, and records its outcome. */
async function send(orm: MikroORM, d: Claimed, deps: DeliveryDeps): Promise<void> {
  const { clock, config } = deps;
  const box = await secretsBox(orm.em.fork(), config);
  const secrets = [box.open(d.secret)];
  if (d.previous_secret && d.previous_secret_expires_at && new Date(d.previous_secret_expires_at) > clock.now()) {
    secrets.push(box.open(d.previous_secret));
  }
  const started = performance.now();
  const outcome = await attempt(d, secrets, config);
  deps.metrics?.attempted(...classify(outcome), (performance.now() - started) / 1000);
  await record(orm.em.fork(), d, outcome, deps);
}

/** An attempt's outcome as /metrics counts it (docs/operator-guide.md "Metrics"). */
function classify(outcome: Outcome): [WebhookOutcome, WebhookFailure | undefined] {
  if (outcome.status !== undefined) return outcome.status >= 200 && outcome.status < 300 ? ['delivered', undefined] : ['failed', 'status'];
  // The messages attempt() gives: the URL rules refuse a private target before any connection, and the time limit.
  if (outcome.error?.startsWith('refused:')) return ['refused', 'refused'];
  return ['failed', outcome.error?.startsWith('timeout:') ? 'timeout' : 'network'];
}

/**
 * Claims up to `batch` due deliveries, sends them concurrently and records each outcome; returns
 * how many it attempted. Any number of processes may run it at once: SKIP LOCKED and the lease
 * keep two of them off one delivery.
 */
export async function deliverDueWebhooks(orm: MikroORM, deps: DeliveryDeps, batch = 20): Promise<number> {
  const claimed = await claimDue(orm.em.fork(), deps.clock.now(), deps.config, batch);
  await Promise.all(claimed.map((d) => send(orm, d, deps)));
  return claimed.length;
}

/**
 * The background delivery loop: each run claims what this process has room for and starts those
 * attempts without waiting for them, so a receiver that never answers holds only its own slots
 * while the next runs go on. An attempt that ends claims again at once: one endpoint's backlog goes
 * out as fast as its receiver answers (at most 4 at once), not 4 a run. `stop` waits for the
 * attempts under way and claims nothing more.
 */
export function webhookDeliveryLoop(deps: DeliveryDeps): { run(orm: MikroORM): Promise<number>; stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  let claiming: Promise<number> | undefined;
  let claimAgain = false;
  let stopping = false;
  const fill = async (orm: MikroORM): Promise<number> => {
    const room = MAX_IN_FLIGHT - inFlight.size;
    if (room <= 0 || stopping) return 0;
    const claimed = await claimDue(orm.em.fork(), deps.clock.now(), deps.config, room);
    for (const d of claimed) {
      const p: Promise<void> = send(orm, d, deps)
        .catch((err: unknown) => deps.log.error({ err, delivery_id: d.id }, 'webhook attempt could not be recorded'))
        .finally(() => {
          inFlight.delete(p);
          // A claim that fails here (the database away) is the next run's to report, once.
          void claim(orm).catch(() => undefined);
        });
      inFlight.add(p);
    }
    return claimed.length;
  };
  // One claim at a time per process; a slot freed during one is claimed right after it.
  const claim = (orm: MikroORM): Promise<number> => {
    if (claiming) {
      claimAgain = true;
      return claiming;
    }
    claiming = fill(orm).finally(() => {
      claiming = undefined;
      if (claimAgain && !stopping) {
        claimAgain = false;
        void claim(orm).catch(() => undefined);
      }
    });
    return claiming;
  };
  return {
    run: claim,
    async stop() {
      stopping = true;
      await claiming?.catch(() => undefined);
      while (inFlight.size) await Promise.all([...inFlight]);
    },
  };
}

/** POSTs the event's body, signed with every live secret, and says what came back. */
async function attempt(d: Claimed, secrets: string[], config: Config): Promise<Outcome> {
  const url = new URL(d.url);
  const refused = refusedTarget(url, config.WEBHOOK_ALLOW_PRIVATE_URLS);
  if (refused) return { error: refused };
  // The receiver holds webhook-timestamp to its own clock (Standard Webhooks allows 5 minutes), so
  // it is the wall-clock time of sending; the schedule above runs on the domain clock.
  const timestamp = unixSeconds(systemClock.now());
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(d.body)),
    'user-agent': 'reseller-gateway-webhooks',
    'webhook-id': d.event_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, d.event_id, timestamp, d.body)).join(' '),
  };
  const signal = AbortSignal.timeout(config.WEBHOOK_TIMEOUT_MS);
  return new Promise<Outcome>((resolve) => {
    const failed = (err: Error) =>
      resolve({
        error: signal.aborted ? `timeout: no response within ${config.WEBHOOK_TIMEOUT_MS} ms` : err.message.slice(0, 500),
      });
    // No agent: one connection per attempt, closed after it. Redirects are never followed (node:http does not).
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        headers,
        agent: false,
        signal,
        lookup: guardedLookup(config.WEBHOOK_ALLOW_PRIVATE_URLS),
      },
      (res) => {
        res.on('error', () => undefined);
        res.resume(); // the body is not read, only drained (bounded by the same timeout)
        resolve({ status: res.statusCode });
      },
    );
    req.on('error', failed);
    req.end(d.body);
  });
}

/** Writes an attempt's outcome, unless another worker has taken the delivery since (its attempts moved on). */
async function record(em: EntityManager, d: Claimed, outcome: Outcome, deps: DeliveryDeps): Promise<void> {
  const { clock, log } = deps;
  const now = clock.now();
  const status = outcome.status;
  const context = { delivery_id: d.id, webhook_endpoint_id: d.endpoint_id, event_id: d.event_id, attempt: d.attempts };
  if (status !== undefined && status >= 200 && status < 300) {
    await autocommitWrite(
      em,
      `update webhook_delivery set status = 'SUCCEEDED', next_attempt_at = null, locked_until = null,
              last_response_status = ?, last_error = null, updated_at = ?
        where id = ? and attempts = ?`,
      [status, now, d.id, d.attempts],
    );
    log.debug({ ...context, status }, 'webhook delivered');
    return;
  }
  if (status === 410) {
    // Gone: the receiver asks for nothing more. The endpoint is disabled and what was pending fails.
    await withTransaction(em, async (tx) => {
      await preparedWrite(tx, "update webhook_endpoint set status = 'DISABLED', updated_at = ? where id = ?", [now, d.endpoint_id]);
      await preparedWrite(
        tx,
        `update webhook_delivery
            set status = 'FAILED', next_attempt_at = null, locked_until = null, updated_at = ?,
                last_response_status = case when id = ? then 410 else last_response_status end,
                last_error = case when id = ? then 'HTTP 410 Gone: the endpoint was disabled' else 'the endpoint was disabled (HTTP 410 Gone)' end
          where endpoint_id = ? and status = 'PENDING'`,
        [now, d.id, d.id, d.endpoint_id],
      );
    });
    log.warn(context, 'webhook endpoint answered 410 Gone; it is disabled');
    return;
  }
  const error = outcome.error ?? (status! >= 300 && status! < 400 ? `HTTP ${status}: redirect not followed` : `HTTP ${status}`);
  const last = d.attempts >= MAX_ATTEMPTS;
  const next = last ? null : new Date(now.getTime() + retryDelayMs(d.attempts));
  await autocommitWrite(
    em,
    `update webhook_delivery set status = ?, next_attempt_at = ?, locked_until = null, last_response_status = ?, last_error = ?, updated_at = ?
      where id = ? and attempts = ? and status = 'PENDING'`,
    [last ? 'FAILED' : 'PENDING', next, status ?? null, error, now, d.id, d.attempts],
  );
  log.info(
    { ...context, status, error, next_attempt_at: next },
    last ? 'webhook delivery failed for good' : 'webhook delivery failed; retrying later',
  );
}
