import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { notFound, validationError } from '../../platform/errors.ts';
import { isId, newId } from '../../platform/ids.ts';
import { invalidCursor, keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { mapPages, pagesPerParent } from '../../platform/pages-per-parent.ts';
import { clientSessionOf, resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { Plain, TxEm } from '../../db/engine/index.ts';
import { preparedRead, preparedWrite, queueWrite, sqlText, insertPlain, plainRow, plainRows } from '../../db/engine/index.ts';
import { getOwnClient, joinedClient, joinedClientColumns, readableClientSql, type Client } from '../clients/index.ts';
import { issuedPassAlong, type HeldPassWithClient } from '../passes/index.ts';
import { lockedSpaAlong, registerBookedIntervals, type BookedInterval, type SpaService } from '../spa/index.ts';
import type { Provider } from '../providers/index.ts';
import {
  BookingSchema,
  BookingSessionSchema,
  bookingStatuses,
  bookingTypes,
  type Booking,
  type BookingSession,
  type BookingStatus,
  type BookingType,
} from './bookings.entity.ts';

// Other modules reach bookings only through this file (docs/architecture.md "Module boundaries").
export { expireBookingSessions } from './expire-sessions.ts';
// Who may use a pass where, and what a session's confirm buys: access codes apply the same rules (docs/partner-guide.md "Access codes").
export { buyVisits, checkOpen, costPerVisit, coverageOf, holderOf, purchaseInput, purchaseOf } from './eligibility.ts';
export type { Holder, HolderInput, Purchase, PurchaseInput, PurchasingSession } from './eligibility.ts';
export type { Booking, BookingSession, BookingStatus, BookingType } from './bookings.entity.ts';
export { bookingStatuses, bookingTypes } from './bookings.entity.ts';

/** Statuses that hold a slot or a spot. */
export const LIVE_STATUSES = ['PENDING', 'CONFIRMED'] as const satisfies readonly BookingStatus[];
export const isLive = (b: Pick<Booking, 'status'>): boolean => (LIVE_STATUSES as readonly string[]).includes(b.status);
/** LIVE_STATUSES as SQL literals (`'PENDING', 'CONFIRMED'`), as the partial indexes on live bookings state them: constants, never input. */
export const LIVE_STATUS_LIST = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

/** How long a co-pay or extra-visits session can be confirmed (spec part 1). */
export const SESSION_LIFETIME_MS = 24 * 3600_000;

/**
 * A spa appointment ends by the close of the opening interval it starts in, on the same date
 * (src/modules/spa/availability.ts), so it lasts at most one local day: 25 hours on the day the
 * clocks go back.
 */
const LONGEST_APPOINTMENT_MS = 25 * 3600_000;
const LONGEST_APPOINTMENT = `${LONGEST_APPOINTMENT_MS / 1000} seconds`;

// Spa availability counts the live spa appointments of a provider (src/modules/spa/availability.ts).
// Those overlapping [from, to) start before `to` and, being at most a day long, after `from` less a
// day: the index (provider_id, starts_at) then reads that range only, not every earlier appointment.
registerBookedIntervals(async (em, providerId, from, to) => {
  const rows = await preparedRead<{ starts_at: Date; ends_at: Date }>(
    em,
    sqlText`select starts_at, ends_at from booking
      where provider_id = ? and type = 'spa' and status in (${LIVE_STATUS_LIST}) and starts_at < ? and starts_at > ? and ends_at > ?`,
    [providerId, to, new Date(from.getTime() - LONGEST_APPOINTMENT_MS), from],
  );
  return rows.map((r) => ({ start: new Date(r.starts_at), end: new Date(r.ends_at) }));
});

export type NewBooking = Omit<
  Booking,
  | 'id'
  | 'status'
  | 'history'
  | 'createdAt'
  | 'updatedAt'
  | 'refund'
  | 'rescheduledTo'
  | 'rescheduledFrom'
  | 'sessionId'
  | 'visitEntitlementId'
  | 'visitPeriod'
  | 'copayAmount'
> &
  Partial<Pick<Booking, 'rescheduledFrom' | 'sessionId' | 'visitEntitlementId' | 'visitPeriod' | 'copayAmount'>>;

/**
 * Inserts a new PENDING booking now (bookings always start PENDING; only the provider moves them
 * on) and returns it as a plain object: nothing on the booking path writes it again, so it is not
 * managed (src/db/engine/plain-rows.ts insertPlain).
 */
export function insertBooking(em: TxEm, fields: NewBooking, at: Date, id = newId('booking', at.getTime())): Promise<Plain<Booking>> {
  return insertPlain(em, BookingSchema, {
    rescheduledFrom: null,
    sessionId: null,
    visitEntitlementId: null,
    visitPeriod: null,
    copayAmount: null,
    ...fields,
    id,
    status: 'PENDING',
    rescheduledTo: null,
    refund: null,
    history: [{ status: 'PENDING', at: at.toISOString() }],
    createdAt: at,
    updatedAt: at,
  });
}

/** Moves a (locked) booking to `status`, appending to its history. Persisted at the next flush. */
export function moveTo(booking: Booking, status: BookingStatus, at: Date): void {
  booking.status = status;
  booking.history = [...booking.history, { status, at: at.toISOString() }];
  booking.updatedAt = at;
}

/**
 * The bookings the caller may name: its reseller's; a client-session token's only its client's
 * (docs/partner-guide.md "Client sessions"), any other is not found, so nothing tells them apart.
 */
function ownBookings(ctx: Ctx): { resellerId: string; clientId?: string } {
  const { resellerId } = resellerOf(ctx);
  const session = clientSessionOf(ctx);
  return session ? { resellerId, clientId: session.clientId } : { resellerId };
}

/** A booking of the caller's reseller, locked for a change; another reseller's or an unknown id is 404. */
export async function lockOwnBooking(ctx: Ctx & { em: TxEm }, id: string): Promise<Booking> {
  const booking = isId('booking', id)
    ? await ctx.em.findOne(BookingSchema, { id, ...ownBookings(ctx) }, { lockMode: LockMode.PESSIMISTIC_WRITE })
    : null;
  if (!booking) throw notFound('booking', id);
  return booking;
}

export async function getOwnBooking(ctx: Ctx, id: string): Promise<Booking> {
  const booking = isId('booking', id) ? await ctx.em.findOne(BookingSchema, { id, ...ownBookings(ctx) }) : null;
  if (!booking) throw notFound('booking', id);
  return booking;
}

export interface BookingFilters {
  status?: string;
  type?: string;
}

/** Filter values in any case (`pending`, `PENDING`); anything else is a 400 naming the filter. */
export function parseBookingFilters(f: BookingFilters): { status?: BookingStatus; type?: BookingType } {
  const status = f.status?.toUpperCase();
  if (status !== undefined && !(bookingStatuses as readonly string[]).includes(status)) {
    throw validationError('status', `status must be one of ${bookingStatuses.join(', ')} (any case)`);
  }
  const type = f.type?.toLowerCase();
  if (type !== undefined && !(bookingTypes as readonly string[]).includes(type)) {
    throw validationError('type', `type must be one of ${bookingTypes.join(', ')} (any case)`);
  }
  return { ...(status ? { status: status as BookingStatus } : {}), ...(type ? { type: type as BookingType } : {}) };
}

/** A client's bookings, newest first, optionally of one status and type. */
export async function listClientBookings(ctx: Ctx, clientId: string, filters: BookingFilters, page: PageArgs): Promise<Page<Booking>> {
  const where = parseBookingFilters(filters);
  const client = await getOwnClient(ctx, clientId);
  // The caller's bookings of the client: a looked-up client's own reseller's bookings are not the caller's (docs/partner-guide.md "Lookup").
  return keysetPage(ctx.em, BookingSchema, { clientId: client.id, resellerId: resellerOf(ctx).resellerId, ...where }, page, 'booking');
}

export type NewSession = Omit<BookingSession, 'id' | 'status' | 'bookingId' | 'expiresAt' | 'createdAt' | 'updatedAt'>;

/** Inserts a new OPEN session that expires SESSION_LIFETIME_MS after `at`, now; a plain object like insertBooking's. */
export function insertSession(em: TxEm, fields: NewSession, at: Date): Promise<Plain<BookingSession>> {
  return insertPlain(em, BookingSessionSchema, {
    ...fields,
    id: newId('session', at.getTime()),
    status: 'OPEN',
    bookingId: null,
    expiresAt: new Date(at.getTime() + SESSION_LIFETIME_MS),
    createdAt: at,
    updatedAt: at,
  });
}

/**
 * A session of the caller's reseller, locked for its confirm; unknown, foreign or of another kind:
 * 404. A prepared statement read into a plain object (a class confirm starts here, a spa confirm at
 * lockOwnSpaSession; markSessionUsed writes it by SQL of its own), which also reads the session's issued pass with its package and
 * client, as getOwnIssuedPass would (its 404 and a lookup token's 403 on `user_pass_id`): the
 * confirm's holder, without a round trip of its own.
 */
export async function lockOwnSession(ctx: Ctx & { em: TxEm }, id: string, type: BookingType): Promise<LockedSession> {
  const rows = isId('session', id)
    ? await preparedWrite<Record<string, unknown>>(
        ctx.em,
        sqlText`select bs.*, ${issuedPassAlong.columns(ctx.em)}
         from booking_session bs ${issuedPassAlong.joins('bs.issued_pass_id')}
        where bs.id = ? and bs.reseller_id = ? and bs.type = ? for update of bs`,
        [issuedPassAlong.reseller(ctx), id, resellerOf(ctx).resellerId, type],
      )
    : [];
  return lockedSession(ctx, id, type, rows);
}

/**
 * lockOwnSession of a spa session, whose statement also reads and locks the spa it names with the
 * services it asks for (spaWithServices' lock, src/modules/spa/spa.service.ts): a confirm's
 * appointment, in the same statement. Issued with readBookedAheadOfSession right behind it, the
 * confirm reads everything in one round trip.
 */
export async function lockOwnSpaSession(
  ctx: Ctx & { em: TxEm },
  id: string,
): Promise<LockedSession & { spa: () => { spa: Provider; services: SpaService[] } }> {
  const rows = isId('session', id)
    ? await preparedWrite<Record<string, unknown>>(
        ctx.em,
        sqlText`select bs.*, ${issuedPassAlong.columns(ctx.em)}, ${lockedSpaAlong.columns(ctx.em)}
         from booking_session bs ${issuedPassAlong.joins('bs.issued_pass_id')} ${lockedSpaAlong.joins('bs.provider_id', 'bs.service_ids')}
        where bs.id = ? and bs.reseller_id = ? and bs.type = 'spa' for update of bs ${lockedSpaAlong.lock}`,
        [issuedPassAlong.reseller(ctx), id, resellerOf(ctx).resellerId],
      )
    : [];
  const locked = lockedSession(ctx, id, 'spa', rows);
  return { ...locked, spa: () => lockedSpaAlong.fromRows(ctx.em, locked.session.providerId, locked.session.serviceIds, rows) };
}

interface LockedSession {
  session: Plain<BookingSession>;
  heldPass: () => HeldPassWithClient;
}

function lockedSession(ctx: Ctx, id: string, type: BookingType, [row]: readonly Record<string, unknown>[]): LockedSession {
  if (!row) throw notFound(`${type} booking session`, id);
  const session = plainRow(ctx.em, BookingSessionSchema, row);
  // Its refusals where the confirm asks for the holder (after the session's own checks).
  return { session, heldPass: () => issuedPassAlong.fromRow(ctx, session.issuedPassId, row, 'user_pass_id') };
}

/**
 * The live appointments overlapping a session's own instants, at the spa it names (the registered
 * source's rule above, keyed by the session): issued right behind lockOwnSpaSession, so read under
 * the spa's lock, in the same round trip. Empty for a session that is not the caller's spa session.
 * The session's values reach the index as the scalar subqueries' results, as parameters would: a
 * join on them let a prepared statement's generic plan, from statistics of a table that had grown
 * since, scan every appointment of the spa index (docs/adr/0021-pipelined-reads.md).
 */
export async function readBookedAheadOfSession(em: TxEm, id: string, resellerId: string): Promise<BookedInterval[]> {
  if (!isId('session', id)) return [];
  const rows = await preparedRead<{ starts_at: Date; ends_at: Date }>(
    em,
    sqlText`with s as (select provider_id, starts_at, ends_at from booking_session where id = ? and reseller_id = ? and type = 'spa')
      select starts_at, ends_at from booking
       where provider_id = (select provider_id from s) and type = 'spa' and status in (${LIVE_STATUS_LIST})
         and starts_at < (select ends_at from s) and starts_at > (select starts_at from s) - ?::interval and ends_at > (select starts_at from s)`,
    [id, resellerId, LONGEST_APPOINTMENT],
  );
  return rows.map((r) => ({ start: new Date(r.starts_at), end: new Date(r.ends_at) }));
}

/** A locked session (lockOwnSession) is used: CONFIRMED, naming the booking it made; queued like the booking's INSERT. */
export async function markSessionUsed(em: TxEm, session: BookingSession, bookingId: string, at: Date): Promise<void> {
  await queueWrite(em, `update booking_session set status = 'CONFIRMED', booking_id = ?, updated_at = ? where id = ?`, [
    bookingId,
    at,
    session.id,
  ]);
  Object.assign(session, { status: 'CONFIRMED', bookingId, updatedAt: at });
}

/** A provider's bookings, newest first, optionally of one status and type (the provider side). */
export function bookingsOfProvider(em: EntityManager, providerId: string, filters: BookingFilters, page: PageArgs): Promise<Page<Booking>> {
  const where = parseBookingFilters(filters);
  return keysetPage(em, BookingSchema, { providerId, ...where }, page, 'booking');
}

const asError = (err: unknown): Error => {
  if (err instanceof Error) return err;
  throw err;
};

/** The conditions on `b` (booking) of the caller's bookings with these filters, and their parameters in order. */
function callersBookings(resellerId: string, where: ReturnType<typeof parseBookingFilters>): { conditions: string[]; params: unknown[] } {
  const conditions = ['b.reseller_id = ?'];
  const params: unknown[] = [resellerId];
  if (where.status) {
    conditions.push('b.status = ?');
    params.push(where.status);
  }
  if (where.type) {
    conditions.push('b.type = ?');
    params.push(where.type);
  }
  return { conditions, params };
}

/**
 * A page of bookings for each client of a page of clients (Client.bookings), by the rules of REST's
 * GET /clients/{id}/bookings: filters through parseBookingFilters, newest first, this reseller's
 * rows only. First pages (and `last` without a cursor) come in one statement for every client
 * (src/platform/pages-per-parent.ts), read as plain rows: nothing writes them, and a managed entity
 * per row was most of the read's time (docs/adr/0031-graphql-reads-as-plain-rows.md). A cursor names one
 * booking, so one client's list: that list is paged by listClientBookings itself, and every other
 * client's answers invalid_cursor, as REST does.
 */
export async function bookingPagesOfClients(
  ctx: Ctx,
  clientIds: readonly string[],
  page: PageArgs,
  filters: BookingFilters,
): Promise<Map<string, Page<Plain<Booking>> | Error>> {
  const where = parseBookingFilters(filters);
  const { resellerId } = resellerOf(ctx);
  const ids = [...new Set(clientIds)];
  const cursor = page.startingAfter ?? page.endingBefore;
  if (cursor !== undefined) {
    const [owner] = isId('booking', cursor)
      ? await preparedRead<{ client_id: string }>(ctx.em, 'select client_id from booking where id = ? and reseller_id = ?', [
          cursor,
          resellerId,
        ])
      : [];
    return new Map(
      await Promise.all(
        ids.map(
          async (id) =>
            [
              id,
              id === owner?.client_id ? await listClientBookings(ctx, id, filters, page).catch(asError) : invalidCursor(page, cursor),
            ] as const,
        ),
      ),
    );
  }
  const { conditions, params } = callersBookings(resellerId, where);
  const pages = await pagesPerParent(
    ctx.em,
    {
      table: 'booking b',
      alias: 'b',
      parentColumn: 'client_id',
      descending: true,
      where: conditions,
      params,
    },
    ids,
    page,
  );
  return mapPages(pages, (row) => plainRow(ctx.em, BookingSchema, row));
}

/**
 * A client as the Client loader reads it (readableClients) and its first page of bookings as
 * bookingPagesOfClients reads it, in one statement: `client(id:)` asking for its bookings without a
 * cursor (src/graphql/read-along.ts). `client` is undefined when the caller may not read it.
 */
export async function clientWithFirstBookings(
  ctx: Ctx,
  clientId: string,
  page: PageArgs,
  filters: BookingFilters,
): Promise<{ client: Plain<Client> | undefined; page: Page<Plain<Booking>> }> {
  const where = parseBookingFilters(filters);
  // A malformed id names no client (the Client loader reads nothing for it either).
  if (!isId('client', clientId)) return { client: undefined, page: { data: [], hasMore: false, direction: 'forward' } };
  const { conditions, params } = callersBookings(resellerOf(ctx).resellerId, where);
  conditions.unshift('b.client_id = c.id');
  const readable = readableClientSql(ctx, 'c');
  // One more than the page: whether there is a next one. The page comes as one JSON value beside the
  // client's row: pg parses it once, whereas as rows it would parse every column of each.
  const [row] = await preparedRead<Record<string, unknown> & { page: Record<string, unknown>[] | null }>(
    ctx.em,
    `select ${joinedClientColumns(ctx.em, 'c')}, (select json_agg(row_to_json(b) order by b.id desc)
                    from (select * from booking b where ${conditions.join(' and ')} order by b.id desc limit ?) b) as page
       from client c
      where c.id = ? and ${readable.sql}`,
    [...params, page.limit + 1, clientId, ...readable.params],
  );
  const bookings = row?.page ? plainRows(ctx.em, BookingSchema, row.page) : [];
  return {
    client: row && joinedClient(ctx.em, 'c', row),
    page: { data: bookings.slice(0, page.limit), hasMore: bookings.length > page.limit, direction: 'forward' },
  };
}
