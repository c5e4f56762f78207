import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { ClientSessionScopeName } from '../../platform/request-context.ts';

/** The scopes a token may hold (docs/partner-guide.md "Client sessions"); every token holds `read`. */
export const clientSessionScopes = ['read', 'book', 'access_code'] as const satisfies readonly ClientSessionScopeName[];

/** A short-lived token acting for one client of one reseller on /graphql (docs/partner-guide.md "Client sessions"). */
export const ClientSessionSchema = defineEntity({
  name: 'ClientSession',
  tableName: 'client_session',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    /** SHA-256 of the token; the token itself is answered once and never kept. */
    tokenHash: p.string(),
    scopes: p.json<ClientSessionScopeName[]>(),
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type ClientSession = InferEntity<typeof ClientSessionSchema>;
