import { builder } from '../../graphql/builder.ts';
import type { GraphQLContext } from '../../graphql/context.ts';
import { childConnections, connectionCost, nodeOrNull, registerNode, rowsById } from '../../graphql/loaders.ts';
import { runQuery, forClientSession } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { localTimeOf } from '../../platform/time.ts';
import { parseInput } from '../../platform/validation.ts';
import { NearInput, nearOf, ProviderRef } from '../providers/providers.graphql.ts';
import {
  ClassCategorySchema,
  ClassInstanceSchema,
  ClassSchema,
  classInstanceStatuses,
  type ClassCategory,
  type ClassInstance,
} from './classes.entity.ts';
import { classesOfProviders, listClassCategories, spotsRemaining, upcomingInstancesOf } from './classes.service.ts';
import { classFilterSchema, listClasses, type ClassShape } from './list-classes.ts';

// Class categories, classes and their instances as Relay nodes of the shared catalogue. A page of
// providers with their classes and next instances costs a constant number of statements: every
// child connection and every parent reference is batched (src/graphql/loaders.ts).

const ClassInstanceStatusEnum = builder.enumType('ClassInstanceStatus', { values: classInstanceStatuses });

export const ClassCategoryRef = builder.loadableNode(builder.objectRef<ClassCategory>('ClassCategory'), {
  description: 'A kind of class (Yoga, Spinning …); its `name` is the `category` filter of `classes`.',
  id: { resolve: (c) => c.id },
  load: rowsById(ClassCategorySchema, 'catalogue'),
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description'),
  }),
});

export const ClassRef = builder.loadableNode(builder.objectRef<ClassShape>('Class'), {
  description: 'A group fitness class at a provider; it is held at its instances.',
  id: { resolve: (c) => c.id },
  load: rowsById(ClassSchema, 'catalogue'),
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    durationMinutes: t.exposeInt('durationMinutes'),
    category: t.field({ type: ClassCategoryRef, resolve: (c, _, ctx) => ClassCategoryRef.getDataloader(ctx).load(c.categoryId) }),
    provider: t.field({ type: ProviderRef, resolve: (c, _, ctx) => ProviderRef.getDataloader(ctx).load(c.providerId) }),
    distanceKm: t.float({
      nullable: true,
      description: "Kilometres from the point searched for to the class's provider; null when the query had none.",
      resolve: (c) => {
        const metres = (c as ClassShape).distanceM;
        return metres === undefined ? null : Math.round(metres) / 1000;
      },
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.createdAt }),
  }),
});

export const ClassInstanceRef = builder.loadableNode(builder.objectRef<ClassInstance>('ClassInstance'), {
  description: 'One scheduled occurrence of a class.',
  id: { resolve: (i) => i.id },
  load: rowsById(ClassInstanceSchema, 'catalogue'),
  fields: (t) => ({
    class: t.field({ type: ClassRef, resolve: (i, _, ctx) => ClassRef.getDataloader(ctx).load(i.classId) }),
    startsAt: t.field({ type: 'DateTime', resolve: (i) => i.startsAt }),
    date: t.field({ type: 'Date', description: "The start's calendar date at the provider.", resolve: (i) => i.localDate }),
    time: t.string({
      description: "The start's wall-clock time at the provider, HH:MM.",
      resolve: async (i, _, ctx) => {
        const cls = await ClassRef.getDataloader(ctx).load(i.classId);
        const provider = await ProviderRef.getDataloader(ctx).load(cls.providerId);
        return localTimeOf(i.startsAt, provider.timezone);
      },
    }),
    capacity: t.exposeInt('capacity'),
    spotsRemaining: t.int({ resolve: (i) => spotsRemaining(i) }),
    status: t.field({ type: ClassInstanceStatusEnum, resolve: (i) => i.status }),
  }),
});

registerNode('classCategory', ClassCategoryRef, { clientSession: true });
registerNode('class', ClassRef, { clientSession: true });
registerNode('classInstance', ClassInstanceRef, { clientSession: true });

const ClassConnection = builder.connectionObject({ type: ClassRef, name: 'ClassConnection' });
const ClassInstanceConnection = builder.connectionObject({ type: ClassInstanceRef, name: 'ClassInstanceConnection' });

/** Classes read by a list are primed into the Class loader, so ClassInstance.class/time reads none again. */
function primed<T extends ClassShape>(ctx: GraphQLContext, classes: T[]): T[] {
  const loader = ClassRef.getDataloader(ctx);
  for (const cls of classes) loader.prime(cls.id, cls);
  return classes;
}

builder.objectFields(ClassRef, (t) => ({
  instances: t.loadable({
    type: ClassInstanceConnection,
    description: 'Upcoming scheduled instances (starting after now), soonest first.',
    byPath: true,
    args: { ...t.arg.connectionArgs() },
    complexity: connectionCost,
    load: childConnections((ctx, classIds, page) => upcomingInstancesOf(ctx, classIds, page)),
    resolve: (c) => c.id,
  }),
}));

builder.objectFields(ProviderRef, (t) => ({
  classes: t.loadable({
    type: ClassConnection,
    description: "The provider's classes, newest first.",
    byPath: true,
    args: { ...t.arg.connectionArgs() },
    complexity: connectionCost,
    load: childConnections(async (ctx, providerIds, page) => {
      const pages = await classesOfProviders(ctx, providerIds, page);
      for (const p of pages.values()) if (!(p instanceof Error)) primed(ctx, p.data);
      return pages;
    }),
    resolve: (p) => p.id,
  }),
}));

builder.queryFields((t) => ({
  classCategories: t.connection({
    extensions: forClientSession('read'),
    type: ClassCategoryRef,
    description: 'Active class categories, newest first.',
    authScopes: { reseller: true },
    complexity: connectionCost,
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        return toConnection(await listClassCategories(ctx, page), page);
      }),
  }),
  classes: t.field({
    extensions: forClientSession('read'),
    type: ClassConnection,
    description:
      'Classes: newest first, or nearest first within `near.radiusKm` when `near` is given. ' +
      '`date` keeps classes with a scheduled instance on that calendar day at their provider.',
    authScopes: { reseller: true },
    args: {
      ...t.arg.connectionArgs(),
      category: t.arg.string({ description: 'A category name, any case.' }),
      date: t.arg({ type: 'Date' }),
      near: t.arg({ type: NearInput }),
      providerId: t.arg.id(),
    },
    complexity: connectionCost,
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const filters = parseInput(classFilterSchema, {
          category: args.category ?? undefined,
          date: args.date ?? undefined,
          provider_id: args.providerId ?? undefined,
        });
        const near = nearOf(args.near);
        const page = pageArgsFromConnection(args);
        const result = await listClasses(
          ctx,
          { category: filters.category, date: filters.date, providerId: filters.provider_id, near },
          page,
        );
        return toConnection({ ...result, data: primed(ctx, result.data) }, page);
      }),
  }),
  class: t.field({
    extensions: forClientSession('read'),
    type: ClassRef,
    nullable: true,
    description: 'A class; null for an unknown id.',
    authScopes: { reseller: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, ctx) => nodeOrNull(ClassRef, ctx, id),
  }),
}));
