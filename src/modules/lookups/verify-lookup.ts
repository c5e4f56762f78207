import { z } from 'zod';
import { randomBase62, sha256Hex } from '../../platform/crypto.ts';
import { DomainError } from '../../platform/errors.ts';
import type { TxCtx } from '../../db/engine/index.ts';
import { parseInput } from '../../platform/validation.ts';
import { findOwnLookup, tokenWorks, viewOf, type LookupView } from './lookups.service.ts';
import { codeMatches } from './lookup-code.ts';
import { recordLookupEvent } from './lookups.events.ts';

export const verifyLookupInput = z.strictObject({
  access_code: z
    .string()
    .regex(/^[0-9]{6}$/, 'Expected the 6-digit code from the e-mail to the client')
    .describe('The 6-digit code mailed to the client'),
});
export type VerifyLookupInput = z.input<typeof verifyLookupInput>;

/**
 * A verify either issues the token or uses up an attempt: the wrong code is an answer (400
 * invalid_lookup_code) whose attempt must be kept, so it is returned, not thrown (a throw rolls back).
 */
export type VerifyOutcome = { view: LookupView; token: string } | { wrongCode: DomainError };

/**
 * POST /lookups/{id}/verify, under the lookup's row lock, so concurrent verifies cannot use more
 * than its attempts. Only the reseller that started it sees it (else 404). The right code makes it
 * ACTIVE with a new token (`lkpt_` + 40 base62, answered once, kept as SHA-256); a wrong one uses
 * an attempt, the last one FAILED; past 15 minutes 422 lookup_expired; not PENDING 409.
 */
export async function verifyLookup(ctx: TxCtx, id: string, raw: VerifyLookupInput): Promise<VerifyOutcome> {
  const input = parseInput(verifyLookupInput, raw);
  const lookup = await findOwnLookup(ctx, id, true);
  const now = ctx.clock.now();
  if (lookup.status !== 'PENDING') {
    throw new DomainError('lookup_not_pending', `Lookup '${lookup.id}' is ${lookup.status}: start a new lookup`);
  }
  if (lookup.expiresAt.getTime() <= now.getTime())
    throw new DomainError('lookup_expired', `Lookup '${lookup.id}' expired; start a new lookup`);
  if (!(await codeMatches(input.access_code, lookup.codeHash))) {
    lookup.attemptsRemaining -= 1;
    if (lookup.attemptsRemaining === 0) lookup.status = 'FAILED';
    lookup.updatedAt = now;
    await ctx.em.flush();
    const left = lookup.attemptsRemaining;
    return {
      wrongCode: new DomainError(
        'invalid_lookup_code',
        left > 0
          ? `access_code is not the code that was mailed; attempts_remaining: ${left}`
          : 'access_code is not the code that was mailed; attempts_remaining: 0, so the lookup failed: start a new lookup',
        { param: 'access_code' },
      ),
    };
  }
  const view = await viewOf(ctx.em, lookup);
  if (!tokenWorks(view, now)) {
    throw new DomainError(
      'lookup_not_pending',
      "The client's pass or the issuer's lookup setting changed since the lookup started: start a new lookup",
    );
  }
  const token = `lkpt_${randomBase62(40)}`;
  lookup.status = 'ACTIVE';
  lookup.tokenHash = sha256Hex(token);
  lookup.verifiedAt = now;
  lookup.updatedAt = now;
  await ctx.em.flush();
  await recordLookupEvent(ctx, 'lookup.verified', view, { now });
  return { view, token };
}
