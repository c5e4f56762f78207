import { notFound } from '../../platform/errors.ts';
import { isId } from '../../platform/ids.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { AccessCodeSchema, type AccessCode } from './access-codes.entity.ts';

// Other modules reach access codes only through this file (docs/architecture.md "Module boundaries"):
// the expiry sweep for `serve`, `worker` and the CLI.
export { expireAccessCodes } from './expire-access-codes.ts';
// The use cases, for other modules that act on a client's behalf (the hosted page, docs/partner-guide.md "Hosted sessions").
export { createAccessCode, type AccessCodeCreation } from './create-access-code.ts';
export { confirmAccessCodeSession } from './confirm-access-code.ts';

/** An access code of the caller's reseller (its hash, never its code); another reseller's or an unknown id is 404. */
export async function getOwnAccessCode(ctx: Ctx, id: string): Promise<AccessCode> {
  const { resellerId } = resellerOf(ctx);
  const code = isId('accessCode', id) ? await ctx.em.findOne(AccessCodeSchema, { id, resellerId }) : null;
  if (!code) throw notFound('access_code', id);
  return code;
}
