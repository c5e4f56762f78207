import { keysetPage, type Page, type PageArgs } from '../../platform/pagination.ts';
import { resellerOf, type Ctx } from '../../platform/request-context.ts';
import { CreditPackageSchema, type CreditPackage } from './credits.entity.ts';

/** GET /credit_packages and GraphQL `creditPackages`: the caller's own packages, newest first. */
export function listCreditPackages(ctx: Ctx, page: PageArgs): Promise<Page<CreditPackage>> {
  const { resellerId } = resellerOf(ctx);
  return keysetPage(ctx.em, CreditPackageSchema, { resellerId }, page, 'creditPackage');
}
