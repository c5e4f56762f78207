import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { validationError } from './errors.ts';
import { parseInput } from './validation.ts';
import { invalidCursor, type Page, type PageArgs } from './pagination.ts';
import { preparedRead, setLocal, withTransaction } from '../db/engine/index.ts';

// Proximity search on earthdistance's cube points: a GiST index on the provider's stored point
// (`earth_point`, ll_to_earth(lat, lon) kept by a trigger) serves both the radius box and
// nearest-first order. Ordering uses the chord distance (`<->`), which
// is monotonic in the great-circle distance, so (chord, id) is an exact keyset: paging stays
// keyset on (distance, id), never OFFSET, and ties are broken by id.

export const DEFAULT_RADIUS_KM = 50;
export const MAX_RADIUS_KM = 500;

export interface Near {
  lat: number;
  lon: number;
  radiusKm: number;
}

const coordinate = (min: number, max: number, name: string) =>
  z
    .string()
    .regex(/^-?\d{1,3}(\.\d+)?$/, `${name} must be a decimal number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`)
    // The form OpenAPI documents (src/rest/openapi.ts): a client sends a number, parsed here from its string.
    .meta({
      openapi: {
        type: 'number',
        minimum: min,
        maximum: max,
        description: `${name === 'lat' ? 'Latitude' : 'Longitude'} of the point to search around; with ${name === 'lat' ? 'lon' : 'lat'}`,
      },
    });

export const nearQuerySchema = z.object({
  lat: coordinate(-90, 90, 'lat').optional(),
  lon: coordinate(-180, 180, 'lon').optional(),
  radius_km: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'radius_km must be a positive number')
    .transform(Number)
    .refine((n) => n > 0 && n <= MAX_RADIUS_KM, `radius_km must be greater than 0 and at most ${MAX_RADIUS_KM}`)
    .meta({
      openapi: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: MAX_RADIUS_KM,
        default: DEFAULT_RADIUS_KM,
        description: 'Only results within this many kilometres of lat+lon',
      },
    })
    .optional(),
});

/** `lat`+`lon` (both or neither) and `radius_km` (only with them; default 50) from a query string. */
export function nearFromQuery(query: Record<string, string | undefined>): Near | undefined {
  const q = parseInput(nearQuerySchema, { lat: query.lat, lon: query.lon, radius_km: query.radius_km });
  return checkNear(q.lat, q.lon, q.radius_km);
}

/** The same rules for typed input (GraphQL). */
export function checkNear(
  lat: number | undefined,
  lon: number | undefined,
  radiusKm: number | undefined,
  names = { lat: 'lat', lon: 'lon', radius: 'radius_km' },
): Near | undefined {
  if (lat === undefined && lon === undefined) {
    if (radiusKm !== undefined) throw validationError(names.radius, `${names.radius} needs ${names.lat} and ${names.lon}`);
    return undefined;
  }
  if (lat === undefined) throw validationError(names.lat, `${names.lon} needs ${names.lat}`);
  if (lon === undefined) throw validationError(names.lon, `${names.lat} needs ${names.lon}`);
  if (!(lat >= -90 && lat <= 90)) throw validationError(names.lat, `${names.lat} must be between -90 and 90`);
  if (!(lon >= -180 && lon <= 180)) throw validationError(names.lon, `${names.lon} must be between -180 and 180`);
  const radius = radiusKm ?? DEFAULT_RADIUS_KM;
  if (!(radius > 0 && radius <= MAX_RADIUS_KM))
    throw validationError(names.radius, `${names.radius} must be greater than 0 and at most ${MAX_RADIUS_KM}`);
  return { lat, lon, radiusKm: radius };
}

export interface ProximityQuery {
  /** FROM clause; `pointAlias` names the table whose lat/lon locate a row. */
  from: string;
  pointAlias: string;
  /** The row id column (the cursor), e.g. `p.id` or `c.id`. */
  idColumn: string;
  select: string;
  /** Extra conditions (already scoped), joined with AND, and their `?` parameters in order. */
  where: string[];
  params: unknown[];
}

/**
 * One page of rows nearest first within the radius, each with `distance_m`. A cursor must be a
 * row of this very list (same filters, inside the radius), else 400 `invalid_cursor`.
 */
export function proximityPage<T extends { id: string }>(
  em: EntityManager,
  q: ProximityQuery,
  near: Near,
  page: PageArgs,
): Promise<Page<T & { distance_m: number }>> {
  // The cube GiST guesses a radius box holds a few dozen rows, so for anything past the first
  // rows (a second page, limit=100) PostgreSQL bitmap-scans the whole box (tens of thousands of
  // rows in a city) and sorts it, many times slower (docs/adr/0023-proximity-knn-scan.md).
  // The KNN index scan reads only what the page needs, so bitmap scans are off for these statements.
  return withTransaction(em, async (tx) => {
    for (const setting of proximityPlannerSettings) await setLocal(tx, setting);
    try {
      return await nearestPage<T>(tx, q, near, page);
    } finally {
      // For the rest of a caller's transaction; after an SQL error the transaction is gone anyway.
      await setLocal(tx, 'enable_bitmapscan = on').catch(() => undefined);
    }
  });
}

/** Planner settings (`set local`) the proximity statements run under; bench/proximity.ts replays them too. */
export const proximityPlannerSettings = ['enable_bitmapscan = off'];

async function nearestPage<T extends { id: string }>(
  em: EntityManager,
  q: ProximityQuery,
  near: Near,
  page: PageArgs,
): Promise<Page<T & { distance_m: number }>> {
  const point = `${q.pointAlias}.earth_point`;
  const origin = 'll_to_earth(?::float8, ?::float8)';
  const radiusM = near.radiusKm * 1000;
  const conditions = [
    // The box is the index-friendly bound; the exact distance then trims its corners.
    `earth_box(${origin}, ?::float8) @> ${point}`,
    `earth_distance(${point}, ${origin}) <= ?::float8`,
    ...q.where,
  ];
  const baseParams = [near.lat, near.lon, radiusM, near.lat, near.lon, radiusM, ...q.params];
  const chord = `(${point} <-> ${origin})`;

  const cursor = page.startingAfter ?? page.endingBefore;
  const backward = page.endingBefore !== undefined || page.backward === true;
  let keyset = '';
  let keysetParams: unknown[] = [];
  if (cursor !== undefined) {
    const [row] = await preparedRead<{ chord: number; distance_m: number }>(
      em,
      `select ${chord} as chord, earth_distance(${point}, ${origin}) as distance_m from ${q.from} where ${conditions.join(' and ')} and ${q.idColumn} = ?`,
      [near.lat, near.lon, near.lat, near.lon, ...baseParams, cursor],
    );
    if (!row) throw invalidCursor(page, cursor);
    keyset = ` and (${chord}, ${q.idColumn}) ${backward ? '<' : '>'} (?::float8, ?)`;
    keysetParams = [near.lat, near.lon, row.chord, cursor];
    if (backward) {
      // No KNN scan runs farthest first: bound the rows before the cursor by a box of its distance (+1 m for rounding).
      keyset += ` and earth_box(${origin}, ?::float8) @> ${point}`;
      keysetParams.push(near.lat, near.lon, row.distance_m + 1);
    }
  }
  const dir = backward ? 'desc' : 'asc';
  // Ordered by the chord alone, the inner query can be a GiST KNN scan ("Order By: <->") that the
  // outer LIMIT stops after the first rows; its never-reached LIMIT keeps PostgreSQL from planning
  // it as a sort of everything in the radius (docs/adr/0023-proximity-knn-scan.md). The outer sort breaks chord ties
  // by id (an Incremental Sort over the KNN order), so the keyset stays exact.
  const rows = await preparedRead<T & { distance_m: number; proximity_chord?: number; proximity_id?: string }>(
    em,
    `select * from (
       select ${q.select}, earth_distance(${point}, ${origin}) as distance_m, ${chord} as proximity_chord, ${q.idColumn} as proximity_id
         from ${q.from}
        where ${conditions.join(' and ')}${keyset}
        order by ${chord} ${dir}
        limit 2147483647
     ) nearest
     order by proximity_chord ${dir}, proximity_id ${dir}
     limit ?`,
    [near.lat, near.lon, near.lat, near.lon, ...baseParams, ...keysetParams, near.lat, near.lon, page.limit + 1],
  );
  for (const row of rows) {
    delete row.proximity_chord;
    delete row.proximity_id;
  }
  const hasMore = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (backward) data.reverse();
  return { data, hasMore, direction: backward ? 'backward' : 'forward' };
}

/** Kilometres rounded to metres, as shown in `distance_km`. */
export const kilometres = (metres: number): number => Math.round(metres) / 1000;
