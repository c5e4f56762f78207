import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { clientSessionScopes, type ClientSession } from './client-sessions.entity.ts';

// V3 presenters: allow-lists from rows to the wire. The token is in the creation's answer only,
// never in a read.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

export const clientSessionSchema = z
  .object({
    object: z.literal('client_session').describe('Always `client_session`'),
    id: z.string().describe('Client session id (`csess_…`)'),
    client_id: z.string().describe('The one client the token acts for'),
    scopes: z
      .array(z.enum(clientSessionScopes))
      .describe('What the token may do: `read` (always), `book` (book and cancel for the client), `access_code` (its own access codes)'),
    expires_at: unixTime('When the token stops working (at most an hour after creation)'),
    revoked_at: unixTime('When the session was revoked').nullable().describe('When the session was revoked, Unix seconds; null before'),
    created: unixTime('Creation time'),
  })
  .meta({ id: 'ClientSession', description: 'A short-lived token acting for one client on /graphql (never its token)' });
export type ClientSessionResource = z.infer<typeof clientSessionSchema>;

export const clientSessionCreationSchema = clientSessionSchema
  .extend({
    token: z.string().describe('`cs_…`: send it as `Authorization: Bearer cs_…` to /graphql. Shown once: only its SHA-256 is kept'),
  })
  .meta({ id: 'ClientSessionCreation', description: 'A new client session with its token, answered once' });
export type ClientSessionCreationResource = z.infer<typeof clientSessionCreationSchema>;

export function presentClientSession(session: ClientSession): ClientSessionResource {
  return {
    object: 'client_session',
    id: session.id,
    client_id: session.clientId,
    scopes: [...session.scopes],
    expires_at: unixSeconds(session.expiresAt),
    revoked_at: session.revokedAt ? unixSeconds(session.revokedAt) : null,
    created: unixSeconds(session.createdAt),
  };
}

/** The creation's answer: `token` right after `object` and `id`, the way the partner guide shows it. */
export function presentClientSessionCreation(session: ClientSession, token: string): ClientSessionCreationResource {
  const { object, id, ...rest } = presentClientSession(session);
  return { object, id, token, ...rest };
}
