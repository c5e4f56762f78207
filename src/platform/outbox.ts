import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from './clock.ts';
import { preparedRead, preparedWrite, queueWrite, withTransaction } from '../db/engine/index.ts';
import type { Logger } from './logger.ts';
import { isDatabaseUnreachable } from './unavailable.ts';

// Side effects leave only through this table. Rows are written with the service's effects in
// the same transaction; a dispatcher claims them with FOR UPDATE SKIP LOCKED, so any number
// of processes can deliver without doing a row twice at the same time. Domain events (topic
// `event`) are written by src/modules/events/events.service.ts, typed by its catalogue.

/**
 * An outbox row (its payload as JSON text), queued (queueWrite) to go with the caller's next
 * statement in its transaction: a booking's event and its outbox row cost it no round trip of
 * their own. Every domain event and every mail takes this path, so its text is fixed (a prepared statement).
 */
export async function enqueue(
  em: EntityManager,
  row: { topic: string; resellerId?: string; payloadJson: string; at: Date },
): Promise<void> {
  await queueWrite(em, 'insert into outbox (topic, reseller_id, payload, created_at, available_at) values (?, ?, ?::jsonb, ?, ?)', [
    row.topic,
    row.resellerId ?? null,
    row.payloadJson,
    row.at,
    row.at,
  ]);
}

export interface OutboxRow {
  id: string;
  topic: string;
  reseller_id: string | null;
  payload: unknown;
  attempts: number;
}
export type OutboxHandler = (row: OutboxRow, em: EntityManager) => Promise<void>;

const RETRY_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** Claims and handles one batch; returns how many rows it handled. Only topics with a handler are claimed. */
export async function dispatchOnce(
  orm: MikroORM,
  handlers: Record<string, OutboxHandler>,
  clock: Clock,
  log: Logger,
  batch = 20,
): Promise<number> {
  const topics = Object.keys(handlers);
  if (topics.length === 0) return 0;
  return withTransaction(orm.em.fork(), async (em) => {
    const rows = await preparedRead<OutboxRow>(
      em,
      `select id, topic, reseller_id, payload, attempts from outbox
        where processed_at is null and available_at <= ? and topic in (select jsonb_array_elements_text(?::jsonb))
        order by id limit ? for update skip locked`,
      [clock.now(), JSON.stringify(topics), batch],
    );
    for (const row of rows) {
      try {
        await withTransaction(em, (inner) => handlers[row.topic](row, inner));
        await preparedWrite(em, 'update outbox set processed_at = ?, attempts = attempts + 1 where id = ?', [clock.now(), row.id]);
      } catch (err) {
        // The database gone: the row stays as it was (no attempt counted); the dispatcher's caller logs it once.
        if (isDatabaseUnreachable(err)) throw err;
        const delay = RETRY_SECONDS[Math.min(row.attempts, RETRY_SECONDS.length - 1)];
        log.warn({ err, outboxId: row.id, topic: row.topic }, 'outbox handler failed; will retry');
        await preparedWrite(em, 'update outbox set attempts = attempts + 1, last_error = ?, available_at = ? where id = ?', [
          String((err as Error).message).slice(0, 500),
          new Date(clock.now().getTime() + delay * 1000),
          row.id,
        ]);
      }
    }
    return rows.length;
  });
}

/** The in-process dispatcher: polls until stopped; src/cli/serve.ts gives it the modules' handlers (events, mail). */
export function startOutboxDispatcher(
  orm: MikroORM,
  handlers: Record<string, OutboxHandler>,
  opts: { clock: Clock; log: Logger; pollMs: number; failed?: (err: unknown) => void },
) {
  const failed = opts.failed ?? ((err: unknown) => opts.log.error({ err }, 'outbox dispatch failed'));
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = dispatchOnce(orm, handlers, opts.clock, opts.log)
      .catch(failed)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.pollMs);
      });
  };
  timer = setTimeout(tick, opts.pollMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
