import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { DomainError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { advisoryXactLock, preparedRead, type TxCtx } from '../../db/engine/index.ts';
import { parseInput } from '../../platform/validation.ts';
import { findClientOf } from '../clients/index.ts';
import { queueMail } from '../mail/index.ts';
import { currentPassOf, effectiveStatus, idParam } from '../passes/index.ts';
import { findIssuer, getOwnReseller } from '../resellers/index.ts';
import { LookupSchema } from './lookups.entity.ts';
import { CODE_ATTEMPTS, CODE_LIFETIME_MS, LOOKUPS_PER_CLIENT_PER_HOUR, type LookupView } from './lookups.service.ts';
import { hashCode } from './lookup-code.ts';
import { lookupMail } from './lookup-mail.ts';

const HOUR_MS = 3600_000;

export const startLookupInput = z.strictObject({
  issuer_id: idParam.describe('The reseller that issued the client its pass (GET /issuers)'),
  client_id: idParam.describe("The client's id at that reseller"),
});
export type StartLookupInput = z.input<typeof startLookupInput>;

/**
 * POST /lookups. The issuer must have lookup enabled and the client must be its client with an
 * ACTIVE pass; anything else is 404, the same whichever part is missing (no enumeration). At most
 * LOOKUPS_PER_CLIENT_PER_HOUR lookups start for one client in an hour, whoever asks (429 with
 * Retry-After). A new 6-digit code is kept as a salted scrypt hash and mailed to the client through
 * the outbox, in this transaction; the answer says nothing about the client.
 */
export async function startLookup(ctx: TxCtx, raw: StartLookupInput): Promise<LookupView> {
  const input = parseInput(startLookupInput, raw);
  const { resellerId } = resellerOf(ctx);
  const now = ctx.clock.now();
  const issuer = await findIssuer(ctx.em, input.issuer_id);
  if (!issuer) throw notFound('issuer', input.issuer_id, 'issuer_id');
  const client = await findClientOf(ctx.em, issuer.id, input.client_id);
  const current = client ? await currentPassOf(ctx.em, client) : undefined;
  if (!client || !current || effectiveStatus(current.issuedPass, now) !== 'ACTIVE') throw notFound('client', input.client_id, 'client_id');
  await checkRate(ctx, client.id, now);

  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const lookup = ctx.em.create(LookupSchema, {
    id: newId('lookup', now.getTime()),
    resellerId,
    issuerId: issuer.id,
    clientId: client.id,
    issuedPassId: current.issuedPass.id,
    status: 'PENDING',
    codeHash: await hashCode(code),
    attemptsRemaining: CODE_ATTEMPTS,
    expiresAt: new Date(now.getTime() + CODE_LIFETIME_MS),
    tokenHash: null,
    verifiedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  await ctx.em.flush();
  const requester = await getOwnReseller(ctx);
  await queueMail(
    ctx.em,
    ctx.config,
    {
      ...lookupMail({ requester: requester.name, issuer: issuer.name, firstName: client.firstName, code, expiresAt: lookup.expiresAt }),
      to: client.email,
      expiresAt: lookup.expiresAt,
      resellerId,
    },
    now,
  );
  return { lookup, passStatus: current.issuedPass.status, passExpiresAt: current.issuedPass.expiresAt, issuerEnabled: true };
}

/**
 * The rate limit, counted under a lock on the client's lookups (a transaction-scoped advisory lock),
 * so concurrent starts cannot pass it together. Retry-After: when the oldest of the hour's lookups
 * leaves the hour.
 */
async function checkRate(ctx: TxCtx, clientId: string, now: Date): Promise<void> {
  await advisoryXactLock(ctx.em, `lookup:${clientId}`);
  const recent = await preparedRead<{ created_at: Date }>(
    ctx.em,
    'select created_at from lookup where client_id = ? and created_at > ? order by created_at desc limit ?',
    [clientId, new Date(now.getTime() - HOUR_MS), LOOKUPS_PER_CLIENT_PER_HOUR],
  );
  if (recent.length < LOOKUPS_PER_CLIENT_PER_HOUR) return;
  const oldest = new Date(recent[recent.length - 1].created_at).getTime();
  const seconds = Math.max(1, Math.ceil((oldest + HOUR_MS - now.getTime()) / 1000));
  throw new DomainError(
    'rate_limited',
    `This client was looked up ${LOOKUPS_PER_CLIENT_PER_HOUR} times in the last hour; retry after ${seconds} seconds`,
    {
      headers: {
        'Retry-After': String(seconds),
        // The IETF RateLimit fields, as every 429 carries them (docs/operator-guide.md "Rate limits").
        'RateLimit-Policy': `"lookups_per_client";q=${LOOKUPS_PER_CLIENT_PER_HOUR};w=${HOUR_MS / 1000}`,
        RateLimit: `"lookups_per_client";r=0;t=${seconds}`,
      },
    },
  );
}
