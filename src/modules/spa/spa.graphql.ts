import { builder } from '../../graphql/builder.ts';
import { childConnections, connectionCost, registerNode, rowsById } from '../../graphql/loaders.ts';
import { runQuery, forClientSession } from '../../graphql/use-case.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { ProviderRef } from '../providers/providers.graphql.ts';
import type { Slot } from './availability.ts';
import { SpaServiceSchema, type SpaService } from './spa.entity.ts';
import { getSpaAvailability, type SpaAvailability } from './spa.service.ts';
import { servicesOfProviders } from './services-of-providers.ts';

export const SpaServiceRef = builder.loadableNode(builder.objectRef<SpaService>('SpaService'), {
  description: 'A service a spa offers: priced in credits for covered clients, and optionally as a co-pay.',
  id: { resolve: (s) => s.id },
  load: rowsById(SpaServiceSchema, 'catalogue'),
  fields: (t) => ({
    name: t.exposeString('name'),
    durationMinutes: t.exposeInt('durationMinutes'),
    credits: t.int({ description: 'Credits a covered booking debits from the client wallet.', resolve: (s) => s.credits }),
    copayAmount: t.int({
      nullable: true,
      description: 'Co-pay for a client whose pass does not cover the spa, minor units of `currency`; null when none is offered.',
      resolve: (s) => s.copayAmount ?? null,
    }),
    currency: t.exposeString('currency'),
    spa: t.field({ type: ProviderRef, resolve: (s, _, ctx) => ProviderRef.getDataloader(ctx).load(s.providerId) }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
  }),
});

registerNode('service', SpaServiceRef, { clientSession: true });

const ProviderServicesConnection = builder.connectionObject({ type: SpaServiceRef, name: 'ProviderServicesConnection' });

builder.objectFields(ProviderRef, (t) => ({
  services: t.loadable({
    type: ProviderServicesConnection,
    description: "The spa's services, newest first; empty for a gym.",
    byPath: true,
    args: { ...t.arg.connectionArgs() },
    complexity: connectionCost,
    load: childConnections((ctx, providerIds, page) => {
      resellerOf(ctx);
      return servicesOfProviders(ctx.em, providerIds, page);
    }),
    resolve: (provider) => provider.id,
  }),
}));

const AvailabilitySlotRef = builder.objectRef<Slot>('AvailabilitySlot').implement({
  description: 'A possible appointment start.',
  fields: (t) => ({
    time: t.exposeString('time', { description: 'Local wall-clock time at the spa, HH:MM.' }),
    startsAt: t.field({ type: 'DateTime', resolve: (s) => s.startsAt }),
    available: t.exposeBoolean('available', { description: 'False when the start has passed or the room capacity is in use.' }),
  }),
});

const AvailabilityRef = builder.objectRef<SpaAvailability>('Availability').implement({
  description: 'Appointment slots of a spa on one local date for a set of services.',
  fields: (t) => ({
    spa: t.field({ type: ProviderRef, resolve: (a) => a.spa }),
    date: t.field({ type: 'Date', resolve: (a) => a.date }),
    timezone: t.string({ description: "The spa's IANA time zone; `date` and slot times are local to it.", resolve: (a) => a.spa.timezone }),
    services: t.field({ type: [SpaServiceRef], resolve: (a) => a.services }),
    durationMinutes: t.exposeInt('durationMinutes', { description: 'The length of the appointment: the sum of the services.' }),
    slots: t.field({
      type: [AvailabilitySlotRef],
      description:
        'Every 15 minutes inside opening hours where the whole appointment fits before closing. A local time ' +
        'skipped by a DST change is not listed; a repeated one (autumn) is listed once, at its first occurrence.',
      resolve: (a) => a.slots,
    }),
  }),
});

builder.queryFields((t) => ({
  spaAvailability: t.field({
    extensions: forClientSession('read'),
    type: AvailabilityRef,
    description: 'Appointment slots of a spa on a local date for the given services (1–10, distinct, all of this spa).',
    authScopes: { reseller: true },
    args: {
      spaId: t.arg.id({ required: true }),
      date: t.arg({ type: 'Date', required: true }),
      serviceIds: t.arg.idList({ required: true }),
    },
    resolve: (_, args, ctx) =>
      runQuery(() =>
        getSpaAvailability(
          ctx,
          args.spaId,
          { date: args.date, serviceIds: args.serviceIds },
          { spaId: 'spaId', date: 'date', serviceIds: 'serviceIds' },
        ),
      ),
  }),
}));
