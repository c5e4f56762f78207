import { raw, type FilterQuery } from '@mikro-orm/core';
import { z } from 'zod';
import { validationError } from '../../platform/errors.ts';
import { proximityPage, type Near } from '../../platform/geo.ts';
import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { lagTolerant, lagTolerantRead, plainRow } from '../../db/engine/index.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { localDate } from '../../platform/validation.ts';
import { providerExists } from '../providers/index.ts';
import { ClassSchema, type Class } from './classes.entity.ts';
import { listingsOf, type ClassListing } from './classes.service.ts';

// GET /classes and Query.classes: newest first, or nearest first (keyset on distance, id) when a
// point is given. Filters by category name, by a local date with a scheduled instance, by provider.

export interface ClassFilters {
  /** A category name, any case. */
  category?: string;
  /** A calendar date, local to each class's provider. */
  date?: string;
  near?: Near;
  providerId?: string;
}

/** The same field names as the REST query, so `param` reads the same on both surfaces. */
export const classFilterSchema = z.object({
  category: z.string().min(1).max(100).optional(),
  date: localDate.optional(),
  provider_id: z.string().min(1).max(64).optional(),
});

export type ClassShape = Class & { distanceM?: number };

export async function listClasses(ctx: Ctx, filters: ClassFilters, page: PageArgs): Promise<Page<ClassShape>> {
  resellerOf(ctx);
  const categoryIds = filters.category === undefined ? undefined : await categoryIdsNamed(ctx, filters.category);
  if (filters.providerId !== undefined) await checkProvider(ctx, filters.providerId);

  if (filters.near) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (categoryIds) {
      where.push(`c.category_id in (${categoryIds.map(() => '?').join(', ')})`);
      params.push(...categoryIds);
    }
    if (filters.providerId) {
      where.push('c.provider_id = ?');
      params.push(filters.providerId);
    }
    if (filters.date) {
      where.push(scheduledOn('c'));
      params.push(filters.date);
    }
    const rows = await proximityPage<Record<string, unknown> & { id: string }>(
      ctx.em,
      {
        from: 'class c join provider p on p.id = c.provider_id',
        pointAlias: 'p',
        idColumn: 'c.id',
        select: 'c.*',
        where,
        params,
      },
      filters.near,
      page,
    );
    return {
      ...rows,
      data: rows.data.map(({ distance_m, ...row }) => ({ ...plainRow(ctx.em, ClassSchema, row), distanceM: Number(distance_m) })),
    };
  }

  const where: FilterQuery<Class>[] = [];
  if (categoryIds) where.push({ categoryId: { $in: categoryIds } });
  if (filters.providerId) where.push({ providerId: filters.providerId });
  if (filters.date) where.push({ [raw((alias: string) => scheduledOn(alias), [filters.date])]: [] } as FilterQuery<Class>);
  return lagTolerant(ctx, (connectionType) =>
    keysetPage(ctx.em, ClassSchema, where.length ? { $and: where } : {}, page, 'class', connectionType),
  );
}

/** GET /classes: each class with its provider's name and tier and its category's name. */
export async function listClassListings(ctx: Ctx, filters: ClassFilters, page: PageArgs): Promise<Page<ClassListing>> {
  const classes = await listClasses(ctx, filters, page);
  return { ...classes, data: await listingsOf(ctx, classes.data) };
}

// local_date is stored in the provider's zone when the instance is written, so a local date
// matches the provider's calendar day, not UTC's.
const scheduledOn = (alias: string) =>
  `exists (select 1 from class_instance ci where ci.class_id = ${alias}.id and ci.local_date = ?::date and ci.status = 'SCHEDULED')`;

/** Active categories with this name in any case; none is a 400 on `category`. */
async function categoryIdsNamed(ctx: Ctx, name: string): Promise<string[]> {
  const rows = await lagTolerantRead<{ id: string }>(ctx, 'select id from class_category where active and lower(name) = lower(?)', [name]);
  if (rows.length === 0) throw validationError('category', `No class category is named '${name}'`);
  return rows.map((r) => r.id);
}

async function checkProvider(ctx: Ctx, id: string): Promise<void> {
  if (!(await lagTolerant(ctx, (connectionType) => providerExists(ctx.em, id, connectionType))))
    throw validationError('provider_id', `No such provider: '${id}'`);
}
