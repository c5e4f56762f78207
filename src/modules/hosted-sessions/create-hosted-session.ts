import { z } from 'zod';
import { randomBase62, sha256Hex } from '../../platform/crypto.ts';
import { DomainError, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { noNul, parseInput } from '../../platform/validation.ts';
import { getOwnClient } from '../clients/index.ts';
import { currentPassOf, effectiveStatus, idParam } from '../passes/index.ts';
import { hostedSessionModes, HostedSessionSchema, type HostedSession } from './hosted-sessions.entity.ts';

/** A session's page works at most this long (docs/partner-guide.md "Hosted sessions"). */
export const MAX_HOSTED_SESSION_SECONDS = 24 * 3600;
export const MIN_HOSTED_SESSION_SECONDS = 5 * 60;

/** An absolute http(s) URL without credentials: the page redirects the client's browser there. */
const returnUrl = z
  .string()
  .max(2000, 'At most 2000 characters')
  .refine(noNul, 'Must not contain NUL characters')
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
    } catch {
      return false;
    }
  }, 'Expected an absolute http or https URL without user name or password');

export const createHostedSessionInput = z.strictObject({
  client_id: idParam.describe('The client the page acts for: a client of this reseller holding an ACTIVE pass'),
  mode: z
    .enum(hostedSessionModes)
    .describe('`booking`: the client books a class or a spa slot; `access_code`: the client gets an access code'),
  return_url: returnUrl.describe('Where the client is sent when done (absolute http or https URL)'),
  allow_copay: z
    .boolean()
    .optional()
    .describe('Let the page book what the pass does not cover, its co-pay debited from the business account (default false)'),
  max_copay_amount: z
    .int()
    .min(0)
    .max(2_147_483_647)
    .optional()
    .describe("With `allow_copay`: the largest co-pay the page may take, in minor units of the reseller's currency (default: any)"),
  expires_in: z
    .int()
    .min(MIN_HOSTED_SESSION_SECONDS)
    .max(MAX_HOSTED_SESSION_SECONDS)
    .optional()
    .describe(
      `Seconds until the page stops working, ${MIN_HOSTED_SESSION_SECONDS}–${MAX_HOSTED_SESSION_SECONDS} (default ${MAX_HOSTED_SESSION_SECONDS})`,
    ),
});
export type CreateHostedSessionInput = z.input<typeof createHostedSessionInput>;

/** The URL's secret: `hss_` and 40 base62 characters (238 bits). */
const newHostedSecret = (): string => `hss_${randomBase62(40)}`;

/**
 * POST /hosted_sessions (docs/partner-guide.md "Hosted sessions"): a session for one client of the caller's
 * reseller that holds an ACTIVE pass, and its URL under `ctx.origin`. The URL is answered once;
 * only the SHA-256 of its secret is stored (an idempotent replay answers it from the sealed record).
 */
export async function createHostedSession(ctx: TxCtx, raw: CreateHostedSessionInput): Promise<{ session: HostedSession; url: string }> {
  const input = parseInput(createHostedSessionInput, raw);
  if (input.max_copay_amount !== undefined && input.allow_copay !== true) {
    throw validationError('max_copay_amount', 'max_copay_amount applies only with allow_copay: true');
  }
  const { resellerId } = resellerOf(ctx);
  const client = await getOwnClient(ctx, input.client_id, 'client_id');
  const now = ctx.clock.now();
  const held = await currentPassOf(ctx.em, client);
  if (!held || effectiveStatus(held.issuedPass, now) !== 'ACTIVE') {
    throw new DomainError('pass_not_active', `Client '${client.id}' holds no ACTIVE pass`);
  }
  const secret = newHostedSecret();
  const session = ctx.em.create(HostedSessionSchema, {
    id: newId('hostedSession', now.getTime()),
    resellerId,
    clientId: client.id,
    mode: input.mode,
    returnUrl: input.return_url,
    allowCopay: input.allow_copay ?? false,
    maxCopayAmount: input.max_copay_amount ?? null,
    secretHash: sha256Hex(secret),
    status: 'OPEN',
    expiresAt: new Date(now.getTime() + (input.expires_in ?? MAX_HOSTED_SESSION_SECONDS) * 1000),
    completedAt: null,
    bookingId: null,
    accessCodeId: null,
    createdAt: now,
    updatedAt: now,
  });
  await ctx.em.flush();
  if (!ctx.origin) throw new Error('createHostedSession: the request context carries no origin');
  return { session, url: `${ctx.origin}/hosted/${secret}` };
}
