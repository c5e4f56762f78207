import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import { DomainError, notFound } from '../../platform/errors.ts';
import { keysetSql, pageFromRows, type Page, type PageArgs } from '../../platform/pagination.ts';
import {
  joinedColumns,
  lagTolerant,
  lagTolerantRead,
  plainJoined,
  plainRows,
  preparedRead,
  sqlText,
  type Plain,
} from '../../db/engine/index.ts';
import { clientSessionOf, lookupScopeOf, resellerOf, type Ctx } from '../../platform/request-context.ts';
import { randomFrom } from '../../platform/crypto.ts';
import { isId } from '../../platform/ids.ts';
import { noNul } from '../../platform/validation.ts';
import {
  checkLookedUpClient,
  joinedClient,
  joinedClientColumns,
  notTheLookedUpClient,
  notTheSessionsClient,
  ownClientsReseller,
  type Client,
} from '../clients/index.ts';
import { coveredProviderCountsSql } from './provider-counts.ts';
import {
  IssuedPassSchema,
  PassPackageSchema,
  type CategoryType,
  type Duration,
  type IssuedPass,
  type IssuedPassStatus,
  type PassPackage,
} from './passes.entity.ts';

// Other modules reach passes only through this file (docs/architecture.md "Module boundaries").
export { durations, issuedPassStatuses, paymentModels } from './passes.entity.ts';
export type {
  Duration,
  IssuedPass,
  IssuedPassStatus,
  PassCategory,
  PassPackage,
  PaymentModel,
  CategoryType,
  VisitEntitlement,
} from './passes.entity.ts';
export { grantEntitlement, restoreVisit, takeEntitlementVisit, takePassVisit, visitsPeriodOf } from './visits.ts';
export type { VisitReason } from './visits.ts';
import { visitsPeriodOf } from './visits.ts';

/**
 * The columns of a pass list a caller may leave unread: the two costliest to send and decode
 * (jsonb, timestamptz): read for nothing, they made `passes(first: 10)` about a tenth slower.
 */
export interface PassListReads {
  categories: boolean;
  createdAt: boolean;
}

/** A pass package as a list read it: `categories`/`createdAt` absent when the list was asked not to read them. */
export type ListedPass = Omit<PassPackage, 'categories' | 'createdAt'> & Partial<Pick<PassPackage, 'categories' | 'createdAt'>>;

/** A page of the reseller's pass packages, newest first (GraphQL `passes`; providerCount is batched apart). */
export async function listPasses(ctx: Ctx, args: PageArgs, reads: PassListReads): Promise<Page<ListedPass>> {
  const page = await passPage(ctx, args, { ...reads, providerCounts: false });
  // A column left unread stays undefined in the plain row: the ListedPass it is typed as.
  return { ...page, data: plainRows(ctx.em, PassPackageSchema, page.data) };
}

export interface PassWithProviderCount {
  pass: PassPackage;
  providerCount: number;
}

/** GET /passes: the same page, each pass with the number of providers it covers, still one statement. */
export async function listPassesWithProviderCounts(ctx: Ctx, args: PageArgs): Promise<Page<PassWithProviderCount>> {
  const page = await passPage(ctx, args, { categories: true, createdAt: true, providerCounts: true });
  const passes = plainRows(ctx.em, PassPackageSchema, page.data);
  return { ...page, data: page.data.map((row, i) => ({ pass: passes[i]!, providerCount: Number(row.provider_count) })) };
}

/**
 * The pass lists are the hottest reads: one statement each (the cursor's check included), a prepared
 * statement on MikroORM's pool (src/db/engine/prepared-read.ts), rows left to plainRows. Each
 * choice of `reads` is one more statement text to prepare: four at most, times the cursor's forms.
 */
async function passPage(ctx: Ctx, args: PageArgs, reads: PassListReads & { providerCounts: boolean }): Promise<Page<PassRow>> {
  const { resellerId } = resellerOf(ctx);
  const scope = { sql: 'reseller_id = ?', params: [resellerId] };
  const keyset = keysetSql(args, 'pass', 'pass_package', scope);
  const coverage = reads.providerCounts
    ? {
        cte: `, coverage as (${coveredProviderCountsSql('page')})`,
        column: 'coalesce(coverage.providers, 0)',
        join: 'left join coverage on coverage.pass_id = page.id',
      }
    : { cte: '', column: '0', join: '' };
  const rows = await lagTolerantRead<PassRow & { cursor_ok: boolean }>(
    ctx,
    `with page as (
       select id, reseller_id, name, description, price, currency, duration, payment_model${reads.categories ? ', categories' : ''}${reads.createdAt ? ', created_at' : ''}
         from pass_package where ${scope.sql} and ${keyset.bound.sql}
        order by id ${keyset.order} limit ?
     )${coverage.cte}
     select page.*, ${coverage.column} as provider_count, ${keyset.cursorOk.sql} as cursor_ok
       from page ${coverage.join}
      order by page.id ${keyset.order}`,
    [...scope.params, ...keyset.bound.params, keyset.limit, ...keyset.cursorOk.params],
  );
  return pageFromRows(
    rows,
    args,
    keyset,
    async () =>
      (await lagTolerant(ctx, (connectionType) => ctx.em.count(PassPackageSchema, { id: keyset.cursor, resellerId }, { connectionType }))) >
      0,
  );
}

/** A pass_package row of a list page (the columns read), with its provider count. */
type PassRow = Record<string, unknown> & { id: string; provider_count: string };

export async function getPass(ctx: Ctx, id: string): Promise<PassPackage> {
  const { resellerId } = resellerOf(ctx);
  // A malformed id (path parameters are free text, NUL included) names nothing: no query.
  const pass = isId('pass', id)
    ? await lagTolerant(ctx, (connectionType) => ctx.em.findOne(PassPackageSchema, { id, resellerId }, { connectionType }))
    : null;
  if (!pass) throw notFound('pass', id);
  return pass;
}

/** The client's current issued pass (the one that is not cancelled, or else the latest). */
export async function findCurrentIssuedPass(
  em: EntityManager,
  resellerId: string,
  clientId: string,
  lock = false,
): Promise<IssuedPass | null> {
  return em.findOne(
    IssuedPassSchema,
    { resellerId, clientId },
    {
      orderBy: { id: 'desc' },
      ...(lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}),
    },
  );
}

/** The client's current issued pass with its package, if it has one (one statement). */
export async function currentPassOf(
  em: EntityManager,
  client: Pick<Client, 'id' | 'resellerId'>,
): Promise<{ issuedPass: IssuedPass; pass: PassPackage } | undefined> {
  return issuedPassWithPackage(em, 'ip.reseller_id = ? and ip.client_id = ?', [client.resellerId, client.id]);
}

/**
 * The issued pass matching `where` (over `ip`; the latest when several do) with its package, in one
 * statement instead of a find for each (a client's current pass, the pass behind an access code).
 * Both are plain objects (src/db/engine/plain-rows.ts): its readers never write them through the
 * entity manager (a visit taken moves the pass's counters by SQL; the use cases that change a pass
 * lock it with findCurrentIssuedPass or lockChangeablePass).
 */
async function issuedPassWithPackage(
  em: EntityManager,
  where: string,
  params: unknown[],
): Promise<{ issuedPass: IssuedPass; pass: PassPackage } | undefined> {
  const [row] = await preparedRead<Record<string, unknown>>(
    em,
    sqlText`select ${joinedColumns(em, IssuedPassSchema, 'ip')}, ${joinedColumns(em, PassPackageSchema, 'pp')}
       from issued_pass ip join pass_package pp on pp.id = ip.pass_id
      where ${where} order by ip.id desc limit 1`,
    params,
  );
  return row && heldPass(em, row);
}

/** The issued pass and package (plain objects) of a row read with their joinedColumns as `ip` and `pp`; undefined without one. */
function heldPass(
  em: EntityManager,
  row: Record<string, unknown>,
): { issuedPass: Plain<IssuedPass>; pass: Plain<PassPackage> } | undefined {
  const [issuedPass] = plainJoined(em, IssuedPassSchema, 'ip', [row]);
  return issuedPass && { issuedPass, pass: plainJoined(em, PassPackageSchema, 'pp', [row])[0]! };
}

/**
 * The client a booking names by `client_id` with its current issued pass and package, in one
 * statement instead of one for the client and one for the pass (every booking initiation reads
 * them). The client must be one the caller acts for (findOwnClient's rules: 404 on `param`, 403 for
 * a lookup token naming another); `held` is undefined when the client holds no pass.
 */
export async function getOwnClientWithCurrentPass(
  ctx: Ctx,
  clientId: string,
  param?: string,
): Promise<{ client: Client; held: { issuedPass: IssuedPass; pass: PassPackage } | undefined }> {
  const resellerId = ownClientsReseller(ctx, clientId);
  const { em } = ctx;
  // A malformed id (body fields are free text) names nothing: no query.
  const [row] = isId('client', clientId)
    ? await preparedRead<Record<string, unknown>>(
        em,
        sqlText`select ${joinedClientColumns(em, 'c')}, ${joinedColumns(em, IssuedPassSchema, 'ip')}, ${joinedColumns(em, PassPackageSchema, 'pp')}
         from client c
         left join lateral (select * from issued_pass where reseller_id = c.reseller_id and client_id = c.id order by id desc limit 1) ip on true
         left join pass_package pp on pp.id = ip.pass_id
        where c.id = ? and c.reseller_id = ?`,
        [clientId, resellerId],
      )
    : [];
  const client = row && joinedClient(em, 'c', row);
  if (!client) throw notFound('client', clientId, param);
  return { client, held: heldPass(em, row) };
}

/**
 * An issued pass of the caller's reseller by its id (a booking's `user_pass_id`, a confirm's
 * session), with its package and its client, in one statement; 404 on `param` otherwise. A lookup
 * token caller names only the pass its lookup was verified against (docs/partner-guide.md "Lookup"); any other is 403.
 */
export async function getOwnIssuedPass(ctx: Ctx, id: string, param?: string): Promise<HeldPassWithClient> {
  const resellerId = ownIssuedPassReseller(ctx, id);
  const held = isId('issuedPass', id)
    ? await passWithPackageAndClient(ctx.em, 'ip.id = ? and ip.reseller_id = ?', [id, resellerId])
    : undefined;
  return checkOwnIssuedPass(ctx, id, held, param);
}

/** The reseller whose issued pass `id` the caller may name: its own, or a lookup token's client's (403 for any other pass). */
function ownIssuedPassReseller(ctx: Ctx, id: string): string {
  const scope = lookupScopeOf(ctx);
  if (scope && id !== scope.issuedPassId) throw notTheLookedUpClient();
  return passesReseller(ctx);
}

/** The reseller whose passes the caller may name: its own, or a lookup token's client's. */
const passesReseller = (ctx: Ctx): string => lookupScopeOf(ctx)?.clientResellerId ?? resellerOf(ctx).resellerId;

/** getOwnIssuedPass's rules for a pass read (or not found) by another statement. */
function checkOwnIssuedPass(ctx: Ctx, id: string, held: HeldPassWithClient | undefined, param?: string): HeldPassWithClient {
  // A client-session token learns nothing of passes not its client's, not even that they exist.
  const session = clientSessionOf(ctx);
  if (session && held?.client.id !== session.clientId) throw notTheSessionsClient();
  if (!held) throw notFound('issued pass', id, param);
  checkLookedUpClient(ctx, held.client.id);
  return held;
}

/**
 * For a statement of another module that reads a row naming an issued pass (a booking session's
 * `issued_pass_id`): the columns and joins that read the pass with its package and client in that
 * same statement (one round trip fewer), and getOwnIssuedPass's answer from the row they read.
 */
export const issuedPassAlong = {
  columns: (em: EntityManager): string =>
    `${joinedColumns(em, IssuedPassSchema, 'ip')}, ${joinedColumns(em, PassPackageSchema, 'pp')}, ${joinedClientColumns(em, 'c')}`,
  /** Joins on `idColumn` (the row's issued pass id); their one parameter is `reseller(ctx)`. */
  joins: (idColumn: string): string =>
    `left join issued_pass ip on ip.id = ${idColumn} and ip.reseller_id = ?
     left join pass_package pp on pp.id = ip.pass_id left join client c on c.id = ip.client_id`,
  /** The reseller whose passes the caller may name (getOwnIssuedPass's). */
  reseller: passesReseller,
  /** The pass `id` as getOwnIssuedPass answers it (403 for a lookup token naming another, 404 on `param`). */
  fromRow(ctx: Ctx, id: string, row: Record<string, unknown>, param?: string): HeldPassWithClient {
    ownIssuedPassReseller(ctx, id);
    const held = heldPass(ctx.em, row);
    return checkOwnIssuedPass(ctx, id, held && { ...held, client: joinedClient(ctx.em, 'c', row)! }, param);
  },
};

/** An issued pass with its package and its client (a booking's holder named by its pass). */
export interface HeldPassWithClient {
  issuedPass: IssuedPass;
  pass: PassPackage;
  client: Client;
}

/** The issued pass matching `where` (over `ip`) with its package and its client, in one statement. */
async function passWithPackageAndClient(em: EntityManager, where: string, params: unknown[]): Promise<HeldPassWithClient | undefined> {
  const [row] = await preparedRead<Record<string, unknown>>(
    em,
    sqlText`select ${joinedColumns(em, IssuedPassSchema, 'ip')}, ${joinedColumns(em, PassPackageSchema, 'pp')}, ${joinedClientColumns(em, 'c')}
       from issued_pass ip join pass_package pp on pp.id = ip.pass_id join client c on c.id = ip.client_id
      where ${where}`,
    params,
  );
  const held = row && heldPass(em, row);
  return held && { ...held, client: joinedClient(em, 'c', row)! };
}

/** An issued pass with its package by id, whichever reseller's (the provider side reads the pass behind an access code). */
export async function findIssuedPassWithPackage(
  em: EntityManager,
  id: string,
): Promise<{ issuedPass: IssuedPass; pass: PassPackage } | undefined> {
  return issuedPassWithPackage(em, 'ip.id = ?', [id]);
}

/**
 * An issued pass of the caller's reseller by its 8-character `passcode` (any case; an access code's
 * `pass_code`); 404 on `param` otherwise. The message does not repeat the passcode. A lookup token
 * caller names only the pass its lookup was verified against (docs/partner-guide.md "Lookup"): any other passcode,
 * known or not, is 403, so a token cannot probe the issuer's passcodes.
 */
export async function getOwnIssuedPassByPasscode(ctx: Ctx, passcode: string, param?: string): Promise<HeldPassWithClient> {
  const scope = lookupScopeOf(ctx);
  const code = passcode.toUpperCase();
  const resellerId = passesReseller(ctx);
  // Passcodes are unique: the pass found is the token's own, or the token may not name it (known or not).
  const held = /^[A-Z0-9]{8}$/.test(code)
    ? await passWithPackageAndClient(ctx.em, 'ip.passcode = ? and ip.reseller_id = ?', [code, resellerId])
    : undefined;
  if (scope && held?.issuedPass.id !== scope.issuedPassId) throw notTheLookedUpClient();
  // Likewise a client-session token: another passcode, known or not, is 403 (no probing).
  const session = clientSessionOf(ctx);
  if (session && held?.client.id !== session.clientId) throw notTheSessionsClient();
  if (!held) throw new DomainError('resource_not_found', 'No issued pass of this reseller has that passcode', { param });
  checkLookedUpClient(ctx, held.client.id);
  return held;
}

export async function getIssuedPassOfClient(ctx: Ctx, clientId: string): Promise<{ issuedPass: IssuedPass; pass: PassPackage }> {
  // The client (the caller's to read, as getOwnClient decides), its current pass and the pass's
  // package in one statement, not three: a frontend's "my bookings" screen asks for it with every
  // request (bench/README.md "Frontend query").
  const { held } = await getOwnClientWithCurrentPass(ctx, clientId);
  if (!held) throw notFound('issued pass for client', clientId);
  return held;
}

/** ACTIVE with its expiry passed reads as EXPIRED; the stored status is only ever behind, never ahead. */
export function effectiveStatus(pass: Pick<IssuedPass, 'status' | 'expiresAt'>, now: Date): IssuedPassStatus {
  if (pass.status === 'ACTIVE' && pass.expiresAt.getTime() <= now.getTime()) return 'EXPIRED';
  return pass.status;
}

/** Visits used in the current calendar month; counters of an earlier month read as zero. */
export function visitsUsed(pass: Pick<IssuedPass, 'visitsPeriod' | 'visitsUsed'>, type: CategoryType, now: Date): number {
  return pass.visitsPeriod === visitsPeriodOf(now) ? (pass.visitsUsed[type] ?? 0) : 0;
}

const MONTHS: Record<Duration, number> = { MONTHLY: 1, QUARTERLY: 3, ANNUALLY: 12 };

/** Adds the pass duration in calendar months (UTC), clamping to the month's last day (31 Jan + 1 month = 28/29 Feb). */
export function addDuration(from: Date, duration: Duration): Date {
  return addMonths(from, MONTHS[duration]);
}

/** Whole days in the period of `duration` that ends at `end` (a paid period's length, for a pro-rata refund). */
export function daysInPeriodEnding(end: Date, duration: Duration): number {
  return Math.round((end.getTime() - addMonths(end, -MONTHS[duration]).getTime()) / 86_400_000);
}

function addMonths(from: Date, months: number): Date {
  const y = from.getUTCFullYear();
  const m = from.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const d = new Date(from.getTime());
  d.setUTCDate(1);
  d.setUTCFullYear(y, m, Math.min(from.getUTCDate(), lastDay));
  return d;
}

const PASSCODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** 8 upper-case alphanumerics, unique across all issued passes (36^8 ≈ 2.8e12 codes). */
/**
 * A new passcode. The column is unique, so a clash fails the insert (a retryable 500) instead of
 * costing a SELECT on every issue: 36^8 ≈ 2.8e12 codes make a clash unlikely for any real volume.
 */
export function newPasscode(): string {
  return randomFrom(PASSCODE_ALPHABET, 8);
}

export const idParam = z.string().min(1).max(64).refine(noNul, 'Must not contain NUL characters');
