import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { lagTolerant, plainRow, plainRows, preparedRead, preparedWrite, queueWrite, sqlText } from '../../db/engine/index.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import type { TxEm } from '../../db/engine/index.ts';
import { findProviders, joinedProvider, joinedProviderColumns, type Provider } from '../providers/index.ts';
import {
  ClassCategorySchema,
  ClassInstanceSchema,
  ClassSchema,
  type Class,
  type ClassCategory,
  type ClassInstance,
} from './classes.entity.ts';

// Other modules reach classes only through this file (docs/architecture.md "Module boundaries").
export { classInstanceStatuses } from './classes.entity.ts';
import { pagesPerParent } from '../../platform/pages-per-parent.ts';

// Reads of the class catalogue (shared by all resellers; every read still needs a reseller caller).

/** How many upcoming instances GET /classes/{id} shows: two weeks of a class held several times a day. */
export const UPCOMING_INSTANCES_SHOWN = 50;

/** Active categories, newest first. */
export async function listClassCategories(ctx: Ctx, page: PageArgs): Promise<Page<ClassCategory>> {
  resellerOf(ctx);
  return lagTolerant(ctx, (connectionType) =>
    keysetPage(ctx.em, ClassCategorySchema, { active: true }, page, 'classCategory', connectionType),
  );
}

export async function getClass(ctx: Ctx, id: string): Promise<Class> {
  resellerOf(ctx);
  // A malformed id (path parameters are free text) names nothing: no query.
  const cls = isId('class', id)
    ? await lagTolerant(ctx, (connectionType) => ctx.em.findOne(ClassSchema, { id }, { connectionType }))
    : null;
  if (!cls) throw notFound('class', id);
  return cls;
}

/** A class as GET /classes shows it: with its provider, its category and, for a proximity search, the distance. */
export interface ClassListing {
  cls: Class;
  provider: Provider;
  category: ClassCategory;
  distanceM?: number;
}

/** Providers and categories of a page of classes: two queries, however long the page. */
export async function listingsOf(ctx: Ctx, classes: (Class & { distanceM?: number })[]): Promise<ClassListing[]> {
  if (classes.length === 0) return [];
  const [providers, categories] = await Promise.all([
    lagTolerant(ctx, (connectionType) =>
      findProviders(
        ctx.em,
        classes.map((c) => c.providerId),
        connectionType,
      ),
    ),
    lagTolerant(ctx, (connectionType) =>
      ctx.em.find(ClassCategorySchema, { id: { $in: [...new Set(classes.map((c) => c.categoryId))] } }, { connectionType }),
    ),
  ]);
  const providerById = new Map(providers.map((p) => [p.id, p]));
  const categoryById = new Map(categories.map((c) => [c.id, c]));
  return classes.map((cls) => ({
    cls,
    provider: providerById.get(cls.providerId)!,
    category: categoryById.get(cls.categoryId)!,
    ...(cls.distanceM !== undefined ? { distanceM: cls.distanceM } : {}),
  }));
}

/** A class with its provider, category and next scheduled instances (GET /classes/{id}). */
export async function getClassWithInstances(ctx: Ctx, id: string): Promise<ClassListing & { instances: ClassInstance[] }> {
  const cls = await getClass(ctx, id);
  const [[listing], pages] = await Promise.all([
    listingsOf(ctx, [cls]),
    upcomingInstancesOf(ctx, [cls.id], { limit: UPCOMING_INSTANCES_SHOWN }),
  ]);
  const page = pages.get(cls.id)!;
  if (page instanceof Error) throw page;
  return { ...listing, instances: page.data };
}

export const spotsRemaining = (instance: ClassInstance): number => Math.max(0, instance.capacity - instance.spotsTaken);

/** Upcoming (start after now) SCHEDULED instances of each class, soonest first; one statement for all classes. */
export async function upcomingInstancesOf(
  ctx: Ctx,
  classIds: readonly string[],
  page: PageArgs,
): Promise<Map<string, Page<ClassInstance> | Error>> {
  resellerOf(ctx);
  const pages = await lagTolerant(ctx, (connectionType) =>
    pagesPerParent(
      ctx.em,
      {
        table: 'class_instance ci',
        alias: 'ci',
        parentColumn: 'class_id',
        sortColumn: 'starts_at',
        descending: false,
        where: ["ci.status = 'SCHEDULED'", 'ci.starts_at > ?'],
        params: [ctx.clock.now()],
      },
      classIds,
      page,
      connectionType,
    ),
  );
  return mapPages(pages, (row) => plainRow(ctx.em, ClassInstanceSchema, row));
}

/** Each provider's classes, newest first; one statement for all providers. */
export async function classesOfProviders(
  ctx: Ctx,
  providerIds: readonly string[],
  page: PageArgs,
): Promise<Map<string, Page<Class> | Error>> {
  resellerOf(ctx);
  const pages = await lagTolerant(ctx, (connectionType) =>
    pagesPerParent(
      ctx.em,
      {
        table: 'class c',
        alias: 'c',
        parentColumn: 'provider_id',
        descending: true,
        where: [],
        params: [],
      },
      providerIds,
      page,
      connectionType,
    ),
  );
  return mapPages(pages, (row) => plainRow(ctx.em, ClassSchema, row));
}

function mapPages<R, T>(pages: Map<string, Page<R> | Error>, map: (row: R) => T): Map<string, Page<T> | Error> {
  return new Map([...pages].map(([id, p]) => [id, p instanceof Error ? p : { ...p, data: p.data.map(map) }]));
}

export type { Class, ClassInstance } from './classes.entity.ts';

/** A class instance with its class and the class's provider, as a booking holds it. */
export interface BookableInstance {
  instance: ClassInstance;
  cls: Class;
  provider: Provider;
}

/**
 * Locks a class instance for a booking change (FOR NO KEY UPDATE: bookings referencing it may still
 * be inserted) and reads it with its class and provider, in one statement. Concurrent bookings of
 * one instance queue here, so the spot count and "already booked" checks that follow, each a
 * statement of its own (with a snapshot taken after the lock), are race-free. Unknown: 404 on `param`.
 */
export async function lockClassInstance(em: TxEm, id: string, param?: string): Promise<BookableInstance> {
  const rows = isId('classInstance', id)
    ? await preparedRead<Record<string, string>>(
        em,
        sqlText`select ci.*, c.provider_id as class_provider_id, c.category_id as class_category_id, c.name as class_name,
              c.description as class_description, c.duration_minutes as class_duration_minutes, c.created_at as class_created_at,
              ${joinedProviderColumns(em, 'p')}
         from class_instance ci join class c on c.id = ci.class_id join provider p on p.id = c.provider_id
        where ci.id = ? for no key update of ci`,
        [id],
      )
    : [];
  const [row] = rows;
  if (!row) throw notFound('class instance', id, param);
  // Plain objects (src/db/engine/plain-rows.ts): the spot count moves by SQL (takeSpot), never by a flush.
  const [instance] = plainRows(em, ClassInstanceSchema, [row]);
  const [cls] = plainRows(em, ClassSchema, [
    {
      id: row.class_id,
      provider_id: row.class_provider_id,
      category_id: row.class_category_id,
      name: row.class_name,
      description: row.class_description,
      duration_minutes: row.class_duration_minutes,
      created_at: row.class_created_at,
    },
  ]);
  return { instance, cls, provider: joinedProvider(em, 'p', row)! };
}

/**
 * Takes one spot of an instance the caller locked and found a spot free in, queued to go with the
 * transaction's next statement (queueWrite). The table's CHECK (spots_taken <= capacity) refuses
 * an overbooking whatever the caller checked: the statement fails and the transaction rolls back.
 */
export async function takeSpot(em: TxEm, instanceId: string): Promise<void> {
  await queueWrite(em, 'update class_instance set spots_taken = spots_taken + 1 where id = ?', [instanceId]);
}

/** Gives a spot back (a cancelled or moved booking). */
export async function releaseSpot(em: TxEm, instanceId: string): Promise<void> {
  await preparedWrite(em, 'update class_instance set spots_taken = spots_taken - 1 where id = ? and spots_taken > 0', [instanceId]);
}

/** An upcoming instance with spots left, named for a person choosing one (the hosted page, docs/partner-guide.md "Hosted sessions"). */
export interface UpcomingClass {
  instanceId: string;
  className: string;
  providerName: string;
  category: Provider['category'];
  tier: string;
  timezone: string;
  startsAt: Date;
  spotsLeft: number;
}

/** SCHEDULED instances starting after now and by `until` with a spot left, soonest first; one statement. */
export async function upcomingOpenClasses(ctx: Ctx, until: Date, limit: number): Promise<UpcomingClass[]> {
  const rows = await preparedRead<{
    id: string;
    class_name: string;
    provider_name: string;
    category: Provider['category'];
    tier: string;
    timezone: string;
    starts_at: Date;
    spots_left: number;
  }>(
    ctx.em,
    `select ci.id, c.name as class_name, p.name as provider_name, p.category, p.tier, p.timezone, ci.starts_at, ci.capacity - ci.spots_taken as spots_left
       from class_instance ci join class c on c.id = ci.class_id join provider p on p.id = c.provider_id
      where ci.status = 'SCHEDULED' and ci.starts_at > ? and ci.starts_at <= ? and ci.spots_taken < ci.capacity
      order by ci.starts_at, ci.id limit ?`,
    [ctx.clock.now(), until, limit],
  );
  return rows.map((r) => ({
    instanceId: r.id,
    className: r.class_name,
    providerName: r.provider_name,
    category: r.category,
    tier: r.tier,
    timezone: r.timezone,
    startsAt: new Date(r.starts_at),
    spotsLeft: Number(r.spots_left),
  }));
}
