import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { preparedRead, withTransaction, type TxCtx } from '../../db/engine/index.ts';
import { notFound } from '../../platform/errors.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { parseInput } from '../../platform/validation.ts';
import { ResellerCorsOriginSchema, ResellerSchema } from './resellers.entity.ts';

// A reseller's CORS allow-list for /graphql (docs/partner-guide.md "Calling from a browser"): the
// origins of its frontends, which call with client-session tokens. Set by the reseller (REST
// PUT /cors_origins, GraphQL setCorsOrigins) or the operator (`resellers origins`); read per
// process by src/graphql/cors.ts, which answers preflights and actual requests from it.

/** At most this many origins per reseller: a list of frontends, not a directory of sites. */
export const MAX_CORS_ORIGINS = 20;

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const ORIGIN = new RegExp(`^(https?)://(${LABEL}(?:\\.${LABEL})*)(?::(\\d{1,5}))?$`);
/** Plain http only for a frontend in development on the same machine. */
const DEVELOPMENT_HOSTS = new Set(['localhost', '127.0.0.1']);
const DEFAULT_PORT: Record<string, string> = { https: '443', http: '80' };

/**
 * An origin as a browser sends it in `Origin`: lower-cased, the default port left out (a browser
 * never sends it, so `https://app.example:443` would match nothing). Refused: anything but exactly
 * `scheme://host[:port]` (a path, a query, a wildcard, user info), and http except for localhost.
 */
export const corsOrigin = z.string({ error: 'Expected an origin such as https://app.example' }).transform((raw, ctx) => {
  const problem = (message: string) => {
    ctx.issues.push({ code: 'custom', message, input: raw });
    return z.NEVER;
  };
  const value = raw.toLowerCase();
  if (value.includes('*')) return problem('Wildcards are not accepted: list each origin exactly, such as https://app.example');
  const match = value.length <= 200 ? ORIGIN.exec(value) : null;
  if (!match) return problem('Expected an origin: scheme://host[:port] with no path, query or fragment, such as https://app.example');
  const [, scheme, host, port] = match;
  if (scheme === 'http' && !DEVELOPMENT_HOSTS.has(host))
    return problem('Only https origins are accepted (http only for http://localhost and http://127.0.0.1, in development)');
  if (port === undefined || Number(port) === Number(DEFAULT_PORT[scheme])) return `${scheme}://${host}`;
  if (Number(port) < 1 || Number(port) > 65_535) return problem('The port must be 1 to 65535');
  return `${scheme}://${host}:${Number(port)}`;
});

const originList = z
  .array(corsOrigin, { error: 'Expected a list of origins' })
  .transform((origins) => [...new Set(origins)])
  .refine((origins) => origins.length <= MAX_CORS_ORIGINS, `At most ${MAX_CORS_ORIGINS} origins`);

export const corsOriginsInput = z.strictObject({
  origins: originList.describe(
    `The whole list, replacing the one stored: up to ${MAX_CORS_ORIGINS} origins such as https://app.example (https; http only for localhost and 127.0.0.1)`,
  ),
});
export type CorsOriginsInput = z.input<typeof corsOriginsInput>;

/** The caller's own allow-list, in alphabetical order. */
export async function getCorsOrigins(ctx: Ctx): Promise<string[]> {
  return originsOf(ctx.em, resellerOf(ctx).resellerId);
}

/** Replaces the caller's allow-list with `origins` (docs/partner-guide.md "Calling from a browser"). */
export async function setCorsOrigins(ctx: TxCtx, raw: CorsOriginsInput): Promise<string[]> {
  const { origins } = parseInput(corsOriginsInput, raw);
  return replaceOrigins(ctx.em, resellerOf(ctx).resellerId, origins, ctx.clock.now());
}

/**
 * The operator's `resellers origins RESELLER_ID [--add …] [--remove …]`: removes, then adds, in one
 * transaction; an origin that is not valid is a 400 naming `add`, and nothing is written. Neither: the list as it is.
 */
export async function changeCorsOrigins(
  em: EntityManager,
  resellerId: string,
  change: { add: string[]; remove: string[] },
  at: Date,
): Promise<string[]> {
  const add = parseInput(z.array(corsOrigin), change.add, 'add');
  // What is removed is compared as it is stored; a malformed one can only be absent.
  const remove = new Set(change.remove.map((o) => corsOrigin.safeParse(o).data ?? o));
  return withTransaction(em, async (tx) => {
    if (!(await tx.findOne(ResellerSchema, { id: resellerId }))) throw notFound('reseller', resellerId);
    const current = await originsOf(tx, resellerId);
    if (add.length === 0 && remove.size === 0) return current;
    const next = parseInput(originList, [...current.filter((o) => !remove.has(o)), ...add], 'add');
    return replaceOrigins(tx, resellerId, next, at);
  });
}

/**
 * Every listed origin of an active reseller, with the resellers that list it: what the CORS policy
 * of each process holds (src/graphql/cors.ts). Read on the primary, so a removal is seen at once.
 */
export async function listedCorsOrigins(em: EntityManager): Promise<Map<string, ReadonlySet<string>>> {
  const rows = await preparedRead<{ origin: string; reseller_id: string }>(
    em,
    `select o.origin, o.reseller_id from reseller_cors_origin o join reseller r on r.id = o.reseller_id where r.status = 'ACTIVE'`,
    [],
  );
  const listed = new Map<string, Set<string>>();
  for (const { origin, reseller_id } of rows) {
    const resellers = listed.get(origin) ?? new Set<string>();
    resellers.add(reseller_id);
    listed.set(origin, resellers);
  }
  return listed;
}

async function originsOf(em: EntityManager, resellerId: string): Promise<string[]> {
  const rows = await em.find(ResellerCorsOriginSchema, { resellerId }, { orderBy: { origin: 'asc' } });
  return rows.map((r) => r.origin);
}

async function replaceOrigins(em: EntityManager, resellerId: string, origins: string[], at: Date): Promise<string[]> {
  // The reseller's row is the list's lock: two replacements at once would both delete, then both insert.
  await em.findOneOrFail(ResellerSchema, { id: resellerId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  await em.nativeDelete(ResellerCorsOriginSchema, { resellerId });
  if (origins.length > 0)
    await em.insertMany(
      ResellerCorsOriginSchema,
      origins.map((origin) => ({ resellerId, origin, createdAt: at })),
    );
  return [...origins].sort();
}
