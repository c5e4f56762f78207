import { randomBytes } from 'node:crypto';
import type { StatementProxy } from '../request-path/statement-proxy.ts';
import { sleep } from '../request-path/processes.ts';
import { inParallel, type BookingsSeed } from './seed.ts';
import { confirmation, countClass, countSession, countSpa, expectSuccess, type Kind, type Sent } from './requests.ts';

// SQL statements per booking request, the exchanges they take (each answered by one ReadyForQuery)
// and the round trips (exchanges pipelined behind unanswered ones share one), counted at the wire (request-path/statement-proxy.ts) for a
// server process of its own, one request at a time (bench/README.md "Bookings"). Each figure is
// the median of three requests, with the three counts when they differ (a key-cache refresh falls
// into one now and then). "1st": the first booking of three fresh class instances / spa days;
// "full": the FILL-th to FILL+2-th booking of one instance / spa day after FILL-1 others, with a
// key, then the next three without: the count must not grow with what is already booked.

export interface Count {
  statements: number;
  exchanges: number;
  roundTrips: number;
  spread: number[];
  sql: string[];
}
export interface KindCount {
  kind: Kind;
  key: boolean;
  first: Count;
  full?: Count;
}

/** Count units (class instances and spa days, seed.COUNT_UNITS of them) of one side. */
export interface Units {
  warm: number;
  withKey: [number, number, number];
  withoutKey: [number, number, number];
}
export const OURS_UNITS: Units = { warm: 0, withKey: [1, 2, 3], withoutKey: [4, 5, 6] };
export const BARE_UNITS: Units = { warm: 7, withKey: [8, 9, 10], withoutKey: [11, 12, 13] };

const newKey = () => `bench-count-${randomBytes(8).toString('hex')}`;

/** Opens the co-pay session of booking j at count unit `unit` and returns its id (through our API, also for the bare handler). */
export type SessionOpener = (unit: number, j: number) => Promise<string>;

export const openCountSession =
  (base: string, seed: BookingsSeed): SessionOpener =>
  async (unit, j) =>
    (await expectSuccess('session', base, seed, countSession(seed, unit, j))).body.session_id;

/** Sessions for the first confirms of `units`, opened beforehand (the bare handler opens none itself). */
export async function openSessionsAhead(open: SessionOpener, units: Units): Promise<SessionOpener> {
  const opened = new Map<number, string>();
  for (const unit of [units.warm, ...units.withKey, ...units.withoutKey]) opened.set(unit, await open(unit, 0));
  return async (unit, j) => {
    const id = j === 0 ? opened.get(unit) : undefined;
    if (id === undefined) throw new Error(`no session opened ahead for unit ${unit}, booking ${j}`);
    return id;
  };
}

/** Sends the j-th booking of `kind` at count unit `unit`; `inWindow` wraps only the counted request. */
async function book(
  base: string,
  seed: BookingsSeed,
  open: SessionOpener,
  kind: Kind,
  unit: number,
  j: number,
  key: boolean,
  inWindow: (send: () => Promise<unknown>) => Promise<void> = async (send) => {
    await send();
  },
): Promise<void> {
  const idempotencyKey = key ? newKey() : undefined;
  let sent: Sent;
  if (kind === 'confirm') {
    // The session is opened outside the window: only the confirm is counted.
    sent = confirmation(await open(unit, j));
  } else {
    sent = kind === 'class' ? countClass(seed, unit, j) : countSpa(seed, unit, j);
  }
  await inWindow(() => expectSuccess(kind, base, seed, sent, idempotencyKey));
}

interface Run {
  sql: string[];
  exchanges: number;
  roundTrips: number;
}

async function counted(proxy: StatementProxy, send: () => Promise<unknown>): Promise<Run> {
  await sleep(50); // let anything the previous request left running finish outside the window
  const from = proxy.statements.length;
  const [exchangesBefore, roundTripsBefore] = [proxy.exchanges, proxy.roundTrips];
  await send();
  await sleep(50);
  return {
    sql: proxy.statements.slice(from),
    exchanges: proxy.exchanges - exchangesBefore,
    roundTrips: proxy.roundTrips - roundTripsBefore,
  };
}

function medianOf(runs: Run[]): Count {
  const sorted = [...runs].sort((a, b) => a.sql.length - b.sql.length || a.roundTrips - b.roundTrips || a.exchanges - b.exchanges);
  const lengths = runs.map((r) => r.sql.length);
  const { sql, exchanges, roundTrips } = sorted[1];
  return { statements: sql.length, exchanges, roundTrips, sql, spread: new Set(lengths).size > 1 ? lengths : [] };
}

/**
 * Counts the three requests with and without a key on fresh units; with `fill`, also after
 * filling one instance / spa day per request to fill-1 bookings (over HTTP, the three fills side
 * by side, a few requests at a time each; not counted).
 */
export async function countStatements(
  base: string,
  proxy: StatementProxy,
  seed: BookingsSeed,
  open: SessionOpener,
  units: Units,
  fill: number | undefined,
  progress: (m: string) => void,
): Promise<KindCount[]> {
  const kinds = ['class', 'spa', 'confirm'] as const;
  const out: KindCount[] = [];
  for (const kind of kinds) {
    await book(base, seed, open, kind, units.warm, 0, true); // warm-up: caches, the first use of each statement
    for (const key of [true, false]) {
      const fresh = key ? units.withKey : units.withoutKey;
      const runs: Run[] = [];
      for (const unit of fresh) {
        await book(base, seed, open, kind, unit, 0, key, async (send) => {
          runs.push(await counted(proxy, send));
        });
      }
      out.push({ kind, key, first: medianOf(runs) });
    }
  }
  if (fill === undefined) return out;
  // Fill the first keyed unit of each kind (its booking 0 was counted above) with bookings 1 … fill-2.
  const unit = units.withKey[0];
  progress(`  filling a class instance, a spa day and a co-pay spa day with ${fill - 2} more bookings each …`);
  await Promise.all(
    kinds.map(async (kind) => {
      if (kind === 'confirm') {
        const sessions: string[] = new Array(fill - 2);
        await inParallel(fill - 2, 4, async (i) => {
          sessions[i] = await open(unit, i + 1);
        });
        await inParallel(fill - 2, 4, async (i) => {
          await expectSuccess('confirm', base, seed, confirmation(sessions[i]));
        });
      } else {
        await inParallel(fill - 2, 4, async (i) => {
          await expectSuccess(kind, base, seed, kind === 'class' ? countClass(seed, unit, i + 1) : countSpa(seed, unit, i + 1));
        });
      }
    }),
  );
  for (const kind of kinds) {
    for (const key of [true, false]) {
      const runs: Run[] = [];
      for (let r = 0; r < 3; r++) {
        const j = fill - 1 + (key ? r : 3 + r);
        await book(base, seed, open, kind, unit, j, key, async (send) => {
          runs.push(await counted(proxy, send));
        });
      }
      out.find((c) => c.kind === kind && c.key === key)!.full = medianOf(runs);
    }
  }
  return out;
}
