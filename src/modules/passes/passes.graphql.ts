import type DataLoader from 'dataloader';
import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { nullWhenNotFound, runMutation, runQuery, forClientSession } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { ClientRef } from '../clients/clients.graphql.ts';
import { registerNode, rowsById } from '../../graphql/loaders.ts';
import { selectedFields } from '../../graphql/selection.ts';
import { issuePass } from './issue-pass.ts';
import { setIssuedPassExpiry, updateIssuedPass } from './change-issued-pass.ts';
import { renewIssuedPass } from './renew-issued-pass.ts';
import { getIssuedPassOfClient, listPasses, effectiveStatus, visitsUsed, type ListedPass } from './passes.service.ts';
import {
  IssuedPassSchema,
  PassPackageSchema,
  durations,
  issuedPassStatuses,
  paymentModels,
  type IssuedPass,
  type PassCategory,
  type PassPackage,
} from './passes.entity.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { countCoveredProviders } from './provider-counts.ts';
import { resellerOf } from '../../platform/request-context.ts';

const Duration = builder.enumType('PassDuration', { values: durations });
const PaymentModel = builder.enumType('PaymentModel', { values: paymentModels });
const IssuedPassStatus = builder.enumType('IssuedPassStatus', { values: issuedPassStatuses });
export const CategoryType = builder.enumType('CategoryType', { values: ['GYM', 'SPA'] as const });

const PassCategoryRef = builder.objectRef<PassCategory>('PassCategory').implement({
  description: 'What a pass covers in one category.',
  fields: (t) => ({
    type: t.field({ type: CategoryType, resolve: (c) => c.type }),
    tiers: t.stringList({ resolve: (c) => c.tiers }),
    visitsAllowed: t.int({ nullable: true, description: 'Visits a calendar month; null = unlimited.', resolve: (c) => c.visits_allowed }),
    creditAllocated: t.int({ description: 'Credits granted to the client each period.', resolve: (c) => c.credit_allocated }),
  }),
});

export const PassRef = builder.loadableNode(builder.objectRef<ListedPass>('Pass'), {
  description: 'A pass package the reseller can issue.',
  id: { resolve: (p) => p.id },
  load: rowsById(PassPackageSchema, 'reseller'),
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    price: t.int({ description: 'Minor units of `currency`.', resolve: (p) => p.price }),
    currency: t.exposeString('currency'),
    duration: t.field({ type: Duration, resolve: (p) => p.duration }),
    paymentModel: t.field({ type: PaymentModel, resolve: (p) => p.paymentModel }),
    // At most one category per type (GYM, SPA): cost it as the 2-item list it is.
    // The `passes` list reads categories and createdAt only for a query that selects them
    // (selectedFields); should a pass reach one without it all the same, its row is loaded by id.
    categories: t.field({
      type: [PassCategoryRef],
      complexity: { field: 1, multiplier: 2 },
      resolve: (p, _, ctx) =>
        p.categories ??
        wholePasses(ctx)
          .load(p.id)
          .then((whole) => whole.categories),
    }),
    providerCount: t.loadable({
      type: 'Int',
      description: "Providers the pass covers (one of its categories has the provider's category and tier).",
      // One statement for every pass of the request, not one per pass.
      load: async (ids: string[], ctx: GraphQLContext) => {
        const counts = await countCoveredProviders(ctx.em, ids);
        return ids.map((id) => counts.get(id) ?? 0);
      },
      resolve: (p) => p.id,
    }),
    createdAt: t.field({
      type: 'DateTime',
      resolve: (p, _, ctx) =>
        p.createdAt ??
        wholePasses(ctx)
          .load(p.id)
          .then((whole) => whole.createdAt),
    }),
  }),
});

/** Pass's node loader, typed as what it reads: whole rows (rowsById), never a list's partial ones. */
export function wholePasses(ctx: GraphQLContext): DataLoader<string, PassPackage> {
  return PassRef.getDataloader(ctx) as DataLoader<string, PassPackage>;
}

interface IssuedPassCategoryShape {
  category: PassCategory;
  issuedPass: IssuedPass;
}
const IssuedPassCategoryRef = builder.objectRef<IssuedPassCategoryShape>('IssuedPassCategory').implement({
  fields: (t) => ({
    type: t.field({ type: CategoryType, resolve: (c) => c.category.type }),
    tiers: t.stringList({ resolve: (c) => c.category.tiers }),
    visitsAllowed: t.int({ nullable: true, resolve: (c) => c.category.visits_allowed }),
    visitsUsed: t.int({
      description: 'Visits used this calendar month.',
      resolve: (c, _, ctx) => visitsUsed(c.issuedPass, c.category.type, ctx.clock.now()),
    }),
    creditAllocated: t.int({ resolve: (c) => c.category.credit_allocated }),
  }),
});

export const IssuedPassRef = builder.loadableNode(builder.objectRef<IssuedPass>('IssuedPass'), {
  description: 'A pass issued to a client.',
  id: { resolve: (p) => p.id },
  load: rowsById(IssuedPassSchema, 'reseller'),
  fields: (t) => ({
    client: t.field({ type: ClientRef, resolve: (p, _, ctx) => ClientRef.getDataloader(ctx).load(p.clientId) }),
    pass: t.field({ type: PassRef, resolve: (p, _, ctx) => PassRef.getDataloader(ctx).load(p.passId) }),
    passcode: t.exposeString('passcode'),
    status: t.field({ type: IssuedPassStatus, resolve: (p, _, ctx) => effectiveStatus(p, ctx.clock.now()) }),
    paymentModel: t.field({ type: PaymentModel, resolve: (p) => p.paymentModel }),
    categories: t.field({
      type: [IssuedPassCategoryRef],
      complexity: { field: 1, multiplier: 2 },
      description: "The package's categories, each with this pass's visit counters.",
      resolve: async (p, _, ctx) => {
        const pass = await wholePasses(ctx).load(p.passId);
        return pass.categories.map((category) => ({ category, issuedPass: p }));
      },
    }),
    startDate: t.field({ type: 'Date', resolve: (p) => p.startDate }),
    expiresAt: t.field({ type: 'DateTime', resolve: (p) => p.expiresAt }),
    paidThrough: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'PREPAID: the end of the last paid period; expiresAt may not pass it without a renewal. PAYG: null.',
      resolve: (p) => p.paidThrough,
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.createdAt }),
  }),
});

registerNode('pass', PassRef, { clientSession: true });
registerNode('issuedPass', IssuedPassRef, { clientSession: true });

const PassRenewalRef = builder.objectRef<Awaited<ReturnType<typeof renewIssuedPass>>>('PassRenewal').implement({
  fields: (t) => ({
    issuedPass: t.field({ type: IssuedPassRef, resolve: (r) => r.issuedPass }),
    amount: t.int({ description: 'Debited from the business account, minor units.', resolve: (r) => r.amount }),
    currency: t.string({ resolve: (r) => r.pass.currency }),
    previousExpiresAt: t.field({ type: 'DateTime', resolve: (r) => r.previousExpiresAt }),
    newExpiresAt: t.field({ type: 'DateTime', resolve: (r) => r.issuedPass.expiresAt }),
  }),
});

builder.queryFields((t) => ({
  passes: t.connection({
    extensions: forClientSession('read'),
    type: PassRef,
    description: 'Pass packages of the reseller, newest first.',
    authScopes: { reseller: true },
    complexity: (args) => ({ field: 1, multiplier: args.first ?? args.last ?? 10 }),
    resolve: (_, args, ctx, info) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        // Only the columns the nodes' selected fields need (one statement either way).
        const asked = selectedFields(info, ['edges', 'node']);
        return toConnection(await listPasses(ctx, page, { categories: asked.has('categories'), createdAt: asked.has('createdAt') }), page);
      }),
  }),
  issuedPass: t.field({
    extensions: forClientSession('read'),
    type: IssuedPassRef,
    nullable: true,
    description: "The client's current issued pass; null when the client is unknown to this reseller.",
    authScopes: { reseller: true },
    args: { clientId: t.arg.id({ required: true }) },
    resolve: (_, { clientId }, ctx) =>
      runQuery(async () => {
        const { issuedPass, pass } = await getIssuedPassOfClient(ctx, clientId);
        // Its package was read with it: IssuedPass.pass reads it no second time. Only a package the
        // Pass loader itself would answer (the caller's reseller's) is primed.
        if (pass.resellerId === resellerOf(ctx).resellerId) PassRef.getDataloader(ctx).prime(pass.id, pass);
        return issuedPass;
      }).catch(nullWhenNotFound),
  }),
}));

const IssuePassInputRef = builder.inputType('IssuePassInput', {
  fields: (t) => ({
    passId: t.id({ required: true }),
    firstName: t.string({ required: true }),
    lastName: t.string({ required: true }),
    email: t.string({ required: true }),
    phone: t.string(),
    externalId: t.string(),
    startDate: t.field({ type: 'Date' }),
  }),
});

const UpdateIssuedPassInputRef = builder.inputType('UpdateIssuedPassInput', {
  fields: (t) => ({ clientId: t.id({ required: true }), passId: t.id({ required: true }) }),
});
const SetIssuedPassExpiryInputRef = builder.inputType('SetIssuedPassExpiryInput', {
  fields: (t) => ({ clientId: t.id({ required: true }), expiresAt: t.field({ type: 'DateTime', required: true }) }),
});
const RenewIssuedPassInputRef = builder.inputType('RenewIssuedPassInput', {
  fields: (t) => ({ clientId: t.id({ required: true }) }),
});

const IssuedPassPayload = builder.objectRef<{ issuedPass: IssuedPass }>('IssuedPassPayload').implement({
  fields: (t) => ({ issuedPass: t.field({ type: IssuedPassRef, resolve: (r) => r.issuedPass }) }),
});

const optional = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

builder.mutationFields((t) => ({
  issuePass: t.field({
    type: IssuedPassPayload,
    description: 'Creates a client and issues it a pass (PREPAID debits the business account). Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: IssuePassInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'IssuePassResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        issuePass(c, {
          pass_id: input.passId,
          first_name: input.firstName,
          last_name: input.lastName,
          email: input.email,
          phone: optional(input.phone),
          external_id: optional(input.externalId),
          start_date: optional(input.startDate),
        }),
      ),
  }),
  updateIssuedPass: t.field({
    type: IssuedPassPayload,
    description:
      "Changes the pass type of the client's issued pass; money follows the coverage (a PREPAID package starts a paid period, leaving one refunds its unused days). Idempotency-Key accepted.",
    authScopes: { reseller: true },
    args: { input: t.arg({ type: UpdateIssuedPassInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'UpdateIssuedPassResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => updateIssuedPass(c, { client_id: input.clientId, pass_id: input.passId })),
  }),
  setIssuedPassExpiry: t.field({
    type: IssuedPassPayload,
    description: "Sets the expiry of the client's issued pass; an expired pass becomes ACTIVE again.",
    authScopes: { reseller: true },
    args: { input: t.arg({ type: SetIssuedPassExpiryInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'SetIssuedPassExpiryResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) =>
        setIssuedPassExpiry(c, input.clientId, {
          expires_at: Math.floor(input.expiresAt.getTime() / 1000),
        }),
      ),
  }),
  renewIssuedPass: t.field({
    type: PassRenewalRef,
    description: 'Renews a PREPAID pass for one more period. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: RenewIssuedPassInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'RenewIssuedPassResult' } },
    resolve: (_, { input }, ctx) => runMutation(ctx, (c) => renewIssuedPass(c, input.clientId)),
  }),
}));
