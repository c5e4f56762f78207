import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import { lookupStatus, presentedLookupStatuses, type LookupView } from './lookups.service.ts';

// V3 presenters: allow-lists from rows to the wire. A lookup names the client by id only: nothing
// about the client (no name, no e-mail, masked or not) is in it, and never its code or token hash.

const unixTime = (what: string) => z.int().min(0).describe(`${what}, Unix seconds`);

export const lookupSchema = z
  .object({
    object: z.literal('lookup').describe('Always `lookup`'),
    id: z.string().describe('Lookup id'),
    status: z
      .enum(presentedLookupStatuses)
      .describe(
        'PENDING (code mailed), ACTIVE (verified; its token works), FAILED (no attempts left) ' +
          'EXPIRED (unverified after 15 minutes, or its token no longer works) or REVOKED (its issuer turned lookup off: for good)',
      ),
    issuer_id: z.string().describe("The client's reseller"),
    client_id: z.string().describe('The client looked up'),
    expires_at: unixTime('When the mailed code stops working'),
    attempts_remaining: z.int().min(0).describe('Wrong codes this lookup still takes'),
    token_expires_at: unixTime("Once verified, when the lookup token stops working: the client's pass expiry")
      .nullable()
      .describe("Once verified, when the lookup token stops working (the client's pass expiry), Unix seconds; null before"),
    created: unixTime('Creation time'),
  })
  .meta({ id: 'Lookup', description: "A request to act for another reseller's client, verified by a code mailed to the client" });
export type LookupResource = z.infer<typeof lookupSchema>;

export const lookupVerificationSchema = lookupSchema
  .extend({
    lookup_token: z
      .string()
      .describe('Send as `Service-Lookup-Token` (docs/partner-guide.md "Lookup"). Shown once: only its SHA-256 is kept'),
  })
  .meta({ id: 'LookupVerification', description: 'A verified lookup with its token, answered once' });
export type LookupVerificationResource = z.infer<typeof lookupVerificationSchema>;

export function presentLookup(view: LookupView, now: Date): LookupResource {
  const { lookup } = view;
  return {
    object: 'lookup',
    id: lookup.id,
    status: lookupStatus(view, now),
    issuer_id: lookup.issuerId,
    client_id: lookup.clientId,
    expires_at: unixSeconds(lookup.expiresAt),
    attempts_remaining: lookup.attemptsRemaining,
    token_expires_at: lookup.status === 'ACTIVE' ? unixSeconds(view.passExpiresAt) : null,
    created: unixSeconds(lookup.createdAt),
  };
}

export function presentLookupVerification(view: LookupView, token: string, now: Date): LookupVerificationResource {
  return { ...presentLookup(view, now), lookup_token: token };
}
