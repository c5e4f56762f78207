import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { hostedSessionModes, hostedSessionStatus, hostedSessionStatuses, type HostedSession } from './hosted-sessions.entity.ts';

// V3 presenters: allow-lists from rows to the wire. The URL (it holds the session's secret) is in
// the creation's answer only, never in a read or an event.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

export const hostedSessionSchema = z
  .object({
    object: z.literal('hosted_session').describe('Always `hosted_session`'),
    id: z.string().describe('Hosted session id (`hs_…`)'),
    client_id: z.string().describe('The one client the page acts for'),
    mode: z
      .enum(hostedSessionModes)
      .describe('`booking`: the client books a class or a spa slot; `access_code`: the client gets an access code'),
    status: z
      .enum(hostedSessionStatuses)
      .describe('OPEN (the page works), COMPLETED (the client booked or got a code) or EXPIRED (past `expires_at` unused)'),
    return_url: z
      .string()
      .describe('Where the page sends the client when done, with `hosted_session_id`, `status` and `booking_id` or `access_code_id` added'),
    allow_copay: z.boolean().describe('Whether a booking the pass does not cover may be paid by a co-pay from the business account'),
    max_copay_amount: z
      .int()
      .min(0)
      .nullable()
      .describe("The largest co-pay the page may take, in minor units of the reseller's currency; null: any (when `allow_copay`)"),
    expires_at: unixTime('When the page stops working (at most 24 hours after creation)'),
    completed_at: unixTime('When the client finished').nullable().describe('When the client finished, Unix seconds; null before'),
    booking_id: z.string().nullable().describe('The booking the client made (mode `booking`); null before'),
    access_code_id: z.string().nullable().describe('The access code the client got (mode `access_code`); null before'),
    created: unixTime('Creation time'),
  })
  .meta({ id: 'HostedSession', description: 'A page of this service where one client books or gets an access code' });
export type HostedSessionResource = z.infer<typeof hostedSessionSchema>;

export const hostedSessionCreationSchema = hostedSessionSchema
  .extend({
    url: z
      .string()
      .describe("The page to send the client to. Shown once: it holds the session's secret, of which only the SHA-256 is kept"),
  })
  .meta({ id: 'HostedSessionCreation', description: 'A new hosted session with its URL, answered once' });
export type HostedSessionCreationResource = z.infer<typeof hostedSessionCreationSchema>;

export function presentHostedSession(session: HostedSession, now: Date): HostedSessionResource {
  return {
    object: 'hosted_session',
    id: session.id,
    client_id: session.clientId,
    mode: session.mode,
    status: hostedSessionStatus(session, now),
    return_url: session.returnUrl,
    allow_copay: session.allowCopay,
    max_copay_amount: session.maxCopayAmount ?? null,
    expires_at: unixSeconds(session.expiresAt),
    completed_at: session.completedAt ? unixSeconds(session.completedAt) : null,
    booking_id: session.bookingId ?? null,
    access_code_id: session.accessCodeId ?? null,
    created: unixSeconds(session.createdAt),
  };
}

export function presentHostedSessionCreation(session: HostedSession, url: string, now: Date): HostedSessionCreationResource {
  return { ...presentHostedSession(session, now), url };
}
