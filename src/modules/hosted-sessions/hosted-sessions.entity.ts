import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const hostedSessionModes = ['booking', 'access_code'] as const;
export type HostedSessionMode = (typeof hostedSessionModes)[number];
/** Stored statuses; an OPEN session past `expiresAt` is presented EXPIRED before the sweep marks it. */
export const hostedSessionStatuses = ['OPEN', 'COMPLETED', 'EXPIRED'] as const;
export type HostedSessionStatus = (typeof hostedSessionStatuses)[number];

/** OPEN past its time is EXPIRED, whether or not the sweep has marked it yet. */
export function hostedSessionStatus(session: Pick<HostedSession, 'status' | 'expiresAt'>, now: Date): HostedSessionStatus {
  return session.status === 'OPEN' && session.expiresAt.getTime() <= now.getTime() ? 'EXPIRED' : session.status;
}

/** A page of this service acting for one client of one reseller (docs/partner-guide.md "Hosted sessions"). */
export const HostedSessionSchema = defineEntity({
  name: 'HostedSession',
  tableName: 'hosted_session',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    mode: p.enum(hostedSessionModes),
    returnUrl: p.string(),
    allowCopay: p.boolean(),
    maxCopayAmount: p.integer().nullable(),
    /** SHA-256 of the URL's secret; the secret itself is answered once and never kept. */
    secretHash: p.string(),
    status: p.enum(hostedSessionStatuses),
    expiresAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    bookingId: p.string().nullable(),
    accessCodeId: p.string().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type HostedSession = InferEntity<typeof HostedSessionSchema>;
