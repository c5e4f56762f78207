import { z } from 'zod';
import { randomBase62, sha256Hex } from '../../platform/crypto.ts';
import { DomainError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { resellerOf, type ClientSessionScopeName } from '../../platform/request-context.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { parseInput } from '../../platform/validation.ts';
import { getOwnClient } from '../clients/index.ts';
import { currentPassOf, effectiveStatus, idParam } from '../passes/index.ts';
import { ClientSessionSchema, clientSessionScopes, type ClientSession } from './client-sessions.entity.ts';

/** A token works at most an hour, 15 minutes unless asked (docs/partner-guide.md "Client sessions"). */
export const MAX_CLIENT_SESSION_SECONDS = 3600;
export const DEFAULT_CLIENT_SESSION_SECONDS = 900;

export const createClientSessionInput = z.strictObject({
  client_id: idParam.describe('The one client the token acts for: a client of this reseller holding an ACTIVE pass'),
  expires_in: z
    .int()
    .min(1)
    .max(MAX_CLIENT_SESSION_SECONDS)
    .optional()
    .describe(`Seconds until the token stops working, 1–${MAX_CLIENT_SESSION_SECONDS} (default ${DEFAULT_CLIENT_SESSION_SECONDS})`),
  scopes: z
    .array(z.enum(clientSessionScopes))
    .max(clientSessionScopes.length * 4)
    .optional()
    .describe(
      'What the token may do besides reading: `book` (book and cancel for the client), `access_code` (its own access codes); `read` is always held',
    ),
});
export type CreateClientSessionInput = z.input<typeof createClientSessionInput>;

/** The token: `cs_` and 40 base62 characters (238 bits), sent as `Authorization: Bearer cs_…` to /graphql. */
const newClientSessionToken = (): string => `cs_${randomBase62(40)}`;

/** `read` first, then the others asked for, each once, in the catalogue's order. */
const scopesOf = (asked: readonly ClientSessionScopeName[] = []): ClientSessionScopeName[] =>
  clientSessionScopes.filter((s) => s === 'read' || asked.includes(s));

/**
 * POST /client_sessions (docs/partner-guide.md "Client sessions"): a token for one client of the
 * caller's reseller that holds an ACTIVE pass. The token is answered once; only its SHA-256 is kept,
 * so the operation takes no Idempotency-Key (its answer is never stored).
 */
export async function createClientSession(ctx: TxCtx, raw: CreateClientSessionInput): Promise<{ session: ClientSession; token: string }> {
  const input = parseInput(createClientSessionInput, raw);
  const { resellerId, clientSession } = resellerOf(ctx);
  // A token never makes another token: the plugin refuses the field, and the use case holds to it too.
  if (clientSession) throw new DomainError('permission_denied', 'A client-session token cannot create client sessions');
  const client = await getOwnClient(ctx, input.client_id, 'client_id');
  const now = ctx.clock.now();
  const held = await currentPassOf(ctx.em, client);
  if (!held || effectiveStatus(held.issuedPass, now) !== 'ACTIVE') {
    throw new DomainError('pass_not_active', `Client '${client.id}' holds no ACTIVE pass`);
  }
  const token = newClientSessionToken();
  const session = ctx.em.create(ClientSessionSchema, {
    id: newId('clientSession', now.getTime()),
    resellerId,
    clientId: client.id,
    tokenHash: sha256Hex(token),
    scopes: scopesOf(input.scopes),
    expiresAt: new Date(now.getTime() + (input.expires_in ?? DEFAULT_CLIENT_SESSION_SECONDS) * 1000),
    revokedAt: null,
    createdAt: now,
  });
  await ctx.em.flush();
  return { session, token };
}
