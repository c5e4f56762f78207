import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const bookingStatuses = ['PENDING', 'CONFIRMED', 'CANCELLED', 'COMPLETED', 'RESCHEDULED'] as const;
export type BookingStatus = (typeof bookingStatuses)[number];
/** A booking's state in words, as both surfaces show it beside its status. */
export const bookingMessages: Record<BookingStatus, string> = {
  PENDING: 'Booking created; awaiting confirmation by the provider',
  CONFIRMED: 'Booking confirmed by the provider',
  COMPLETED: 'The client checked in',
  CANCELLED: 'Booking cancelled',
  RESCHEDULED: 'Booking moved to another time',
};
export const bookingTypes = ['spa', 'class'] as const;
export type BookingType = (typeof bookingTypes)[number];
export const bookingPayments = ['PASS', 'COPAY', 'EXTRA_VISITS'] as const;
export type BookingPayment = (typeof bookingPayments)[number];

/** What a cancellation gave back (the V3 `refund`). */
export interface Refund {
  policy: 'FULL' | 'LATE';
  credits_refunded: number;
  visits_restored: number;
  copay_refunded: number;
  currency: string;
}

export interface StatusChange {
  status: BookingStatus;
  at: string;
}

export const BookingSchema = defineEntity({
  name: 'Booking',
  tableName: 'booking',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    issuedPassId: p.string(),
    providerId: p.string(),
    type: p.enum(bookingTypes),
    status: p.enum(bookingStatuses),
    classInstanceId: p.string().nullable(),
    serviceIds: p.json<string[]>(),
    serviceName: p.string(),
    providerName: p.string(),
    // Local to the provider's zone; startsAt is the instant they name.
    localDate: p.string().columnType('date'),
    localTime: p.string(),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    payment: p.enum(bookingPayments),
    visitsDeducted: p.integer(),
    // Where the deducted visit came from: null = the pass's monthly counter.
    visitEntitlementId: p.string().nullable(),
    // The pass counter's month the visit was taken from (YYYY-MM), when it came from the counter.
    visitPeriod: p.string().nullable(),
    creditsCharged: p.bigint('number'),
    copayAmount: p.bigint('number').nullable(),
    currency: p.string(),
    sessionId: p.string().nullable(),
    rescheduledFrom: p.string().nullable(),
    rescheduledTo: p.string().nullable(),
    refund: p.json<Refund>().nullable(),
    history: p.json<StatusChange[]>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Booking = InferEntity<typeof BookingSchema>;

export const sessionKinds = ['SPA_COPAY', 'CLASS_COPAY', 'CLASS_EXTRA_VISITS'] as const;
export type SessionKind = (typeof sessionKinds)[number];
export const sessionStatuses = ['OPEN', 'CONFIRMED', 'EXPIRED'] as const;
export type SessionStatus = (typeof sessionStatuses)[number];

export const BookingSessionSchema = defineEntity({
  name: 'BookingSession',
  tableName: 'booking_session',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    clientId: p.string(),
    issuedPassId: p.string(),
    providerId: p.string(),
    kind: p.enum(sessionKinds),
    type: p.enum(bookingTypes),
    classInstanceId: p.string().nullable(),
    serviceIds: p.json<string[]>(),
    serviceName: p.string(),
    providerName: p.string(),
    localDate: p.string().columnType('date'),
    localTime: p.string(),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    currency: p.string(),
    copayAmount: p.bigint('number').nullable(),
    copayCredits: p.bigint('number').nullable(),
    copayOptionIds: p.json<string[]>(),
    costPerVisit: p.bigint('number').nullable(),
    visitsUsed: p.integer().nullable(),
    maxVisits: p.integer().nullable(),
    status: p.enum(sessionStatuses),
    bookingId: p.string().nullable(),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type BookingSession = InferEntity<typeof BookingSessionSchema>;
