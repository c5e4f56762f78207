import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, notFound, validationError } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { joinedColumns, lagTolerant, lagTolerantRead, plainJoined, preparedRead, preparedWrite, sqlText } from '../../db/engine/index.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { localDate, parseInput } from '../../platform/validation.ts';
import { getProvider, joinedProvider, joinedProviderColumns, providersFromRows } from '../providers/index.ts';
import type { Provider } from '../providers/index.ts';
import { spaDaySlots, spaSlotAt, type BookedAhead, type Slot } from './availability.ts';
import { SpaServiceSchema, type SpaService } from './spa.entity.ts';

/** At most this many services in one appointment (one availability question, one booking). */
export const MAX_SERVICES_PER_APPOINTMENT = 10;

/** A provider of category SPA; a gym or an unknown id is not found. */
export type { SpaService } from './spa.entity.ts';
export type { Slot } from './availability.ts';

export async function getSpa(ctx: Ctx, spaId: string, param?: string): Promise<Provider> {
  const provider = await getProvider(ctx, spaId, param).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === 'resource_not_found') throw notFound('spa', spaId, param);
    throw err;
  });
  if (provider.category !== 'SPA') throw notFound('spa', spaId, param);
  return provider;
}

/** The spa's services, newest first. */
export async function listSpaServices(ctx: Ctx, spaId: string, page: PageArgs): Promise<Page<SpaService>> {
  const spa = await getSpa(ctx, spaId);
  return lagTolerant(ctx, (connectionType) =>
    keysetPage(ctx.em, SpaServiceSchema, { providerId: spa.id }, page, 'service', connectionType),
  );
}

/** The shape of a service list before anything is read: 1–10 distinct well-formed ids. */
export function checkServiceIds(ids: readonly string[], param = 'service_ids'): void {
  if (ids.length === 0) throw validationError(param, 'Name at least one service');
  if (ids.length > MAX_SERVICES_PER_APPOINTMENT) throw validationError(param, `Name at most ${MAX_SERVICES_PER_APPOINTMENT} services`);
  const malformed = ids.find((id) => !isId('service', id));
  if (malformed !== undefined) throw validationError(param, `'${malformed}' is not a service id`);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) throw validationError(param, `'${duplicate}' is named more than once`);
}

/**
 * A spa and the services an appointment asks for, in the order asked, in one statement: every spa
 * booking, confirm and availability reads both (plain objects, src/db/engine/plain-rows.ts). An
 * unknown spa, or a provider that is no spa, is a 404 on `params.spaId`; a service id of another
 * spa or an unknown one is a 400 on `params.serviceIds` (a query or body value, not a path: no 404).
 * With `lock` (a booking's transaction), the same statement locks the spa (FOR NO KEY UPDATE on
 * its provider row, which bookings referencing it do not conflict with): its appointments are
 * placed one at a time.
 */
export async function spaWithServices(
  ctx: Ctx,
  spaId: string,
  ids: readonly string[],
  params: { spaId?: string; serviceIds?: string } = {},
  { lock = false } = {},
): Promise<{ spa: Provider; services: SpaService[] }> {
  resellerOf(ctx);
  const serviceParam = params.serviceIds ?? 'service_ids';
  checkServiceIds(ids, serviceParam);
  const sql = sqlText`select p.*, ${joinedColumns(ctx.em, SpaServiceSchema, 's')}
         from provider p left join spa_service s on s.provider_id = p.id and s.id in (select jsonb_array_elements_text(?::jsonb))
        where p.id = ?`;
  // A malformed id (path parameters are free text) names nothing: no query.
  const rows = !isId('provider', spaId)
    ? []
    : lock
      ? await preparedWrite<Record<string, unknown>>(ctx.em, sqlText`${sql} for no key update of p`, [JSON.stringify(ids), spaId])
      : await lagTolerantRead<Record<string, unknown>>(ctx, sql, [JSON.stringify(ids), spaId]);
  return spaAndServices(
    providersFromRows(ctx.em, rows.slice(0, 1))[0],
    plainJoined(ctx.em, SpaServiceSchema, 's', rows),
    ids,
    spaId,
    params,
  );
}

/** spaWithServices' answer from what its statement read: the spa (if any) and the services joined to it. */
function spaAndServices(
  spa: Provider | undefined,
  joined: SpaService[],
  ids: readonly string[],
  spaId: string,
  params: { spaId?: string; serviceIds?: string },
): { spa: Provider; services: SpaService[] } {
  if (!spa || spa.category !== 'SPA') throw notFound('spa', spaId, params.spaId);
  const byId = new Map(joined.map((s) => [s.id, s]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) throw validationError(params.serviceIds ?? 'service_ids', `No service '${missing}' at spa '${spa.id}'`);
  return { spa, services: ids.map((id) => byId.get(id)!) };
}

let lockedSpaColumns: string | undefined;
/**
 * spaWithServices with `lock`, for a statement of another module whose row names a spa and an
 * appointment's services (a booking session's provider_id and service_ids): the columns, joins and
 * locking clause that read and lock them in that same statement (a confirm's first round trip,
 * not a second), and spaWithServices' answer from its rows. The row comes once per service.
 */
export const lockedSpaAlong = {
  /** The same text object each time (sqlText finds its statement by it). */
  columns: (em: EntityManager): string =>
    (lockedSpaColumns ??= `${joinedProviderColumns(em, 'p')}, ${joinedColumns(em, SpaServiceSchema, 's')}`),
  /** `spaIdColumn` and `serviceIdsColumn` (a jsonb array of service ids) are the row's own; the provider row must exist. */
  joins: (spaIdColumn: string, serviceIdsColumn: string): string =>
    `join provider p on p.id = ${spaIdColumn}
     left join spa_service s on s.provider_id = p.id and s.id in (select jsonb_array_elements_text(${serviceIdsColumn}))`,
  /** A locking clause to follow the statement's own (FOR NO KEY UPDATE on the provider row, as spaWithServices'). */
  lock: 'for no key update of p',
  fromRows: (
    em: EntityManager,
    spaId: string,
    ids: readonly string[],
    rows: readonly Record<string, unknown>[],
  ): { spa: Provider; services: SpaService[] } =>
    spaAndServices(rows[0] && joinedProvider(em, 'p', rows[0]), plainJoined(em, SpaServiceSchema, 's', rows), ids, spaId, {}),
};

/** Dates availability answers for: wide, but inside what Date and Intl resolve in every zone. */
export const AVAILABILITY_DATES = { from: '1970-01-01', to: '2999-12-31' } as const;

/** A calendar date, YYYY-MM-DD, within AVAILABILITY_DATES. */
export function checkLocalDate(value: string | undefined, param = 'date'): string {
  if (value === undefined) throw validationError(param, `Missing required parameter '${param}'`);
  const date = parseInput(localDate, value, param);
  if (date < AVAILABILITY_DATES.from || date > AVAILABILITY_DATES.to) {
    throw validationError(param, `${param} must be between ${AVAILABILITY_DATES.from} and ${AVAILABILITY_DATES.to}`);
  }
  return date;
}

export interface AvailabilityQuery {
  date: string | undefined;
  serviceIds: readonly string[];
}
/** Names of the inputs in error `param`s: V3 query names; GraphQL shows them in camelCase. */
export interface AvailabilityParams {
  spaId?: string;
  date: string;
  serviceIds: string;
}

export interface SpaAvailability {
  spa: Provider;
  date: string;
  services: SpaService[];
  durationMinutes: number;
  slots: Slot[];
}

export async function getSpaAvailability(
  ctx: Ctx,
  spaId: string,
  query: AvailabilityQuery,
  params: AvailabilityParams = { date: 'date', serviceIds: 'service_ids' },
): Promise<SpaAvailability> {
  resellerOf(ctx);
  const date = checkLocalDate(query.date, params.date);
  const { spa, services } = await spaWithServices(ctx, spaId, query.serviceIds, params);
  const durationMinutes = services.reduce((sum, s) => sum + s.durationMinutes, 0);
  const slots = await spaDaySlots(ctx.em, spa, date, durationMinutes, ctx.clock.now());
  return { spa, date, services, durationMinutes, slots };
}

export { SLOT_MINUTES, registerBookedIntervals, readBookedAhead, type BookedInterval, type BookedAhead } from './availability.ts';

/** The slot starting at the local `time` of `date`, as the availability shows it; undefined when it is no slot. */
export function slotAt(
  em: EntityManager,
  spa: Provider,
  date: string,
  time: string,
  durationMinutes: number,
  now: Date,
  ahead?: BookedAhead,
): Promise<Slot | undefined> {
  return spaSlotAt(em, spa, date, time, durationMinutes, now, ahead);
}

/** A spa service named for a person choosing one (the hosted page, docs/partner-guide.md "Hosted sessions"). */
export interface SpaTreatment {
  serviceId: string;
  spaId: string;
  name: string;
  spaName: string;
  tier: string;
  durationMinutes: number;
  /** In the service's own currency; null: no co-pay price. */
  copayAmount: number | null;
  currency: string;
}

/** Services of every spa, by spa name then service name; one statement, at most `limit`. */
export async function listSpaTreatments(ctx: Ctx, limit: number): Promise<SpaTreatment[]> {
  const rows = await preparedRead<{
    id: string;
    provider_id: string;
    name: string;
    spa_name: string;
    tier: string;
    duration_minutes: number;
    copay_amount: string | null;
    currency: string;
  }>(
    ctx.em,
    `select s.id, s.provider_id, s.name, p.name as spa_name, p.tier, s.duration_minutes, s.copay_amount, s.currency
       from spa_service s join provider p on p.id = s.provider_id
      where p.category = 'SPA' order by p.name, s.name, s.id limit ?`,
    [limit],
  );
  return rows.map((r) => ({
    serviceId: r.id,
    spaId: r.provider_id,
    name: r.name,
    spaName: r.spa_name,
    tier: r.tier,
    durationMinutes: Number(r.duration_minutes),
    copayAmount: r.copay_amount === null ? null : Number(r.copay_amount),
    currency: r.currency.trim(),
  }));
}

/** The spa a service belongs to; undefined for an unknown or malformed id. */
export async function spaOfService(em: EntityManager, serviceId: string): Promise<string | undefined> {
  if (!isId('service', serviceId)) return undefined;
  const [row] = await preparedRead<{ provider_id: string }>(em, 'select provider_id from spa_service where id = ?', [serviceId]);
  return row?.provider_id;
}
