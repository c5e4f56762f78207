/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** ACTIVE until a provider redeems it (REDEEMED) or its day ends (EXPIRED). */
export type AccessCodeStatus =
  | 'ACTIVE'
  | 'EXPIRED'
  | 'REDEEMED';

/** A class instance to book a place in (V3 POST /bookings/class). */
export type BookClassInput = {
  /** The class instance. */
  classInstanceId: string | number;
  /** The client; send this or `userPassId` (or both, agreeing). */
  clientId?: string | number | null | undefined;
  /** When sent, must be the client's first name (any case): a guard against booking for the wrong client. */
  firstName?: string | null | undefined;
  /** When sent, must be the client's last name (any case). */
  lastName?: string | null | undefined;
  /** The client's issued pass; send this or `clientId`. */
  userPassId?: string | number | null | undefined;
};

/** A spa appointment to book (V3 POST /bookings/spa). */
export type BookSpaInput = {
  /** The client; send this or `userPassId` (or both, agreeing). */
  clientId?: string | number | null | undefined;
  /** The day, in the spa's zone. */
  date: string;
  /** When sent, must be the client's first name (any case): a guard against booking for the wrong client. */
  firstName?: string | null | undefined;
  /** When sent, must be the client's last name (any case). */
  lastName?: string | null | undefined;
  /** One or more of the spa's services, booked back to back. */
  serviceIds: Array<string | number>;
  /** The spa (a provider of category SPA). */
  spaId: string | number;
  /** The start, HH:MM in the spa's zone, on a quarter hour within opening hours. */
  time: string;
  /** The client's issued pass; send this or `clientId`. */
  userPassId?: string | number | null | undefined;
};

/** The status of the booking made now (PENDING), or of the session opened instead: AWAITING_COPAY or AWAITING_VISITS. */
export type BookingInitiationStatus =
  | 'AWAITING_COPAY'
  | 'AWAITING_VISITS'
  | 'CANCELLED'
  | 'COMPLETED'
  | 'CONFIRMED'
  | 'PENDING'
  | 'RESCHEDULED';

/** Where a booking is: PENDING until the provider confirms it; then CONFIRMED, COMPLETED, CANCELLED or RESCHEDULED. */
export type BookingStatus =
  | 'CANCELLED'
  | 'COMPLETED'
  | 'CONFIRMED'
  | 'PENDING'
  | 'RESCHEDULED';

/** What was booked: a spa appointment or a class (V3 `spa` / `class`). */
export type BookingType =
  /** A place in a class instance. */
  | 'CLASS'
  /** A spa appointment of one or more services. */
  | 'SPA';

/** A booking to cancel (V3 POST /bookings/{id}/cancel). */
export type CancelBookingInput = {
  /** The booking. */
  bookingId: string | number;
};

export type CategoryType =
  | 'GYM'
  | 'SPA';

export type ClassInstanceStatus =
  | 'CANCELLED'
  | 'SCHEDULED';

/** What a client-session token may do for its client. */
export type ClientSessionScope =
  /** Make access codes for the client. */
  | 'ACCESS_CODE'
  /** Book classes and spa slots for the client, and cancel its bookings. */
  | 'BOOK'
  /** Read the client, its pass, credits and bookings, and the catalogue (always held). */
  | 'READ';

/** Who the code is for and where (V3 POST /access-codes): `clientId` or `passCode` (or both, agreeing). */
export type CreateAccessCodeInput = {
  /** The client. */
  clientId?: string | number | null | undefined;
  /** The client's issued pass's 8-character passcode. */
  passCode?: string | null | undefined;
  /** The provider the code is for; without it the code is valid at any gym the pass covers. */
  providerId?: string | number | null | undefined;
};

export type IssuedPassStatus =
  | 'ACTIVE'
  | 'CANCELLED'
  | 'EXPIRED';

/** A point to search around: results come nearest first, each with `distanceKm`. */
export type NearInput = {
  /** Latitude, -90 to 90. */
  lat: number;
  /** Longitude, -180 to 180. */
  lon: number;
  /** Only results within this many kilometres; default 50, at most 500. */
  radiusKm?: number | null | undefined;
};

export type PaymentModel =
  | 'PAYG'
  | 'PREPAID';

export type ProviderCategory =
  | 'GYM'
  | 'SPA';

/** Which part of the provider's cancellation policy applied. */
export type RefundPolicy =
  /** Cancelled before the free-cancellation window closed: everything came back. */
  | 'FULL'
  /** Cancelled after it: the policy's share of credits and co-pay, no visit. */
  | 'LATE';

export type GetCurrentSessionQueryVariables = Exact<{ [key: string]: never; }>;


export type GetCurrentSessionQuery = { currentClientSession: { id: string, scopes: Array<ClientSessionScope>, expiresAt: string, client: { id: string, firstName: string, lastName: string } } | null };

export type GetClientQueryVariables = Exact<{
  id: string | number;
}>;


export type GetClientQuery = { client: { id: string, firstName: string, lastName: string, email: string, phone: string | null, externalId: string | null, createdAt: string, credits: { balance: number, currency: string } } | null };

export type GetIssuedPassQueryVariables = Exact<{
  clientId: string | number;
}>;


export type GetIssuedPassQuery = { issuedPass: { id: string, status: IssuedPassStatus, passcode: string, paymentModel: PaymentModel, startDate: string, expiresAt: string, paidThrough: string | null, pass: { id: string, name: string, currency: string }, categories: Array<{ type: CategoryType, tiers: Array<string>, visitsAllowed: number | null, visitsUsed: number, creditAllocated: number }> } | null };

export type ListBookingsQueryVariables = Exact<{
  clientId: string | number;
  first?: number | null | undefined;
  after?: string | null | undefined;
  status?: string | null | undefined;
  type?: string | null | undefined;
}>;


export type ListBookingsQuery = { client: { id: string, bookings: { edges: Array<{ cursor: string, node: { id: string, type: BookingType, status: BookingStatus, serviceName: string, date: string, time: string, scheduledFor: string, creditsCharged: number, visitsDeducted: number, copayAmount: number | null, currency: string, createdAt: string, classInstanceId: string | null, provider: { id: string, name: string, category: ProviderCategory, address: string, city: string, timezone: string }, refund: { policy: RefundPolicy, creditsRefunded: number, visitsRestored: number, copayRefunded: number, currency: string } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } | null };

export type ListProvidersQueryVariables = Exact<{
  near?: NearInput | null | undefined;
  category?: ProviderCategory | null | undefined;
  tier?: string | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type ListProvidersQuery = { providers: { edges: Array<{ cursor: string, node: { id: string, name: string, category: ProviderCategory, tier: string, description: string, address: string, city: string, country: string, timezone: string, lat: number, lon: number, distanceKm: number | null, cancellationPolicy: { freeCancellationHours: number, lateCancellationRefundPercent: number } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type ListClassesQueryVariables = Exact<{
  near?: NearInput | null | undefined;
  date?: string | null | undefined;
  category?: string | null | undefined;
  providerId?: string | number | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  instances?: number | null | undefined;
}>;


export type ListClassesQuery = { classes: { edges: Array<{ cursor: string, node: { id: string, name: string, description: string, durationMinutes: number, distanceKm: number | null, category: { id: string, name: string }, provider: { id: string, name: string, address: string, city: string, timezone: string }, instances: { edges: Array<{ node: { id: string, date: string, time: string, startsAt: string, status: ClassInstanceStatus, capacity: number, spotsRemaining: number } }> } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type GetClassQueryVariables = Exact<{
  id: string | number;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type GetClassQuery = { class: { id: string, name: string, description: string, durationMinutes: number, category: { id: string, name: string }, provider: { id: string, name: string, address: string, city: string, timezone: string, cancellationPolicy: { freeCancellationHours: number, lateCancellationRefundPercent: number } }, instances: { edges: Array<{ node: { id: string, date: string, time: string, startsAt: string, status: ClassInstanceStatus, capacity: number, spotsRemaining: number } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } | null };

export type GetSpaAvailabilityQueryVariables = Exact<{
  spaId: string | number;
  date: string;
  serviceIds: Array<string | number> | string | number;
}>;


export type GetSpaAvailabilityQuery = { spaAvailability: { date: string, timezone: string, durationMinutes: number, spa: { id: string, name: string }, services: Array<{ id: string, name: string, durationMinutes: number, credits: number, copayAmount: number | null, currency: string }>, slots: Array<{ time: string, startsAt: string, available: boolean }> } };

export type BookClassMutationVariables = Exact<{
  input: BookClassInput;
}>;


export type BookClassMutation = { bookClass:
    | { __typename: 'ClassBookingInitiation', status: BookingInitiationStatus, message: string, className: string, providerName: string, date: string, time: string, scheduledFor: string, visitsDeducted: number | null, visitsUsed: number | null, maxVisits: number | null, copayRequired: boolean, additionalVisitsRequired: boolean, costPerVisit: number | null, currency: string, sessionId: string | null, sessionExpiresAt: string | null, copayOptions: Array<{ id: string, name: string, maxVisits: number, visitDurationDays: number, clientCopayAmount: number, clientCopayCredits: number, currency: string }> | null, booking: { id: string, status: BookingStatus, scheduledFor: string } | null }
    | { __typename: 'ConflictError', code: string, message: string }
    | { __typename: 'IdempotencyError', code: string, message: string }
    | { __typename: 'InputError', code: string, message: string, param: string | null }
    | { __typename: 'NotFoundError', code: string, message: string, param: string | null }
    | { __typename: 'PermissionError', code: string, message: string }
    | { __typename: 'UnprocessableError', code: string, message: string }
   };

export type BookSpaMutationVariables = Exact<{
  input: BookSpaInput;
}>;


export type BookSpaMutation = { bookSpa:
    | { __typename: 'ConflictError', code: string, message: string }
    | { __typename: 'IdempotencyError', code: string, message: string }
    | { __typename: 'InputError', code: string, message: string, param: string | null }
    | { __typename: 'NotFoundError', code: string, message: string, param: string | null }
    | { __typename: 'PermissionError', code: string, message: string }
    | { __typename: 'SpaBookingInitiation', status: BookingInitiationStatus, message: string, serviceName: string, providerName: string, date: string, time: string, scheduledFor: string, copayRequired: boolean, copayAmount: number | null, copayCredits: number | null, currency: string, sessionId: string | null, sessionExpiresAt: string | null, booking: { id: string, status: BookingStatus, scheduledFor: string, creditsCharged: number } | null }
    | { __typename: 'UnprocessableError', code: string, message: string }
   };

export type CancelBookingMutationVariables = Exact<{
  input: CancelBookingInput;
}>;


export type CancelBookingMutation = { cancelBooking:
    | { __typename: 'BookingPayload', booking: { id: string, status: BookingStatus, refund: { policy: RefundPolicy, creditsRefunded: number, visitsRestored: number, copayRefunded: number, currency: string } | null } }
    | { __typename: 'ConflictError', code: string, message: string }
    | { __typename: 'IdempotencyError', code: string, message: string }
    | { __typename: 'InputError', code: string, message: string, param: string | null }
    | { __typename: 'NotFoundError', code: string, message: string, param: string | null }
    | { __typename: 'PermissionError', code: string, message: string }
    | { __typename: 'UnprocessableError', code: string, message: string }
   };

export type CreateAccessCodeMutationVariables = Exact<{
  input: CreateAccessCodeInput;
}>;


export type CreateAccessCodeMutation = { createAccessCode:
    | { __typename: 'AccessCode', id: string, code: string, qrCode: string, status: AccessCodeStatus, expiresAt: string, createdAt: string, issuedPassId: string, provider: { id: string, name: string } | null }
    | { __typename: 'AccessCodeSession', sessionId: string, sessionExpiresAt: string, message: string, copayRequired: boolean, additionalVisitsRequired: boolean, visitsUsed: number | null, maxVisits: number | null, costPerVisit: number | null, copayOptions: Array<{ id: string, name: string, maxVisits: number, visitDurationDays: number, clientCopayAmount: number, clientCopayCredits: number, currency: string }> | null }
    | { __typename: 'ConflictError', code: string, message: string }
    | { __typename: 'IdempotencyError', code: string, message: string }
    | { __typename: 'InputError', code: string, message: string, param: string | null }
    | { __typename: 'NotFoundError', code: string, message: string, param: string | null }
    | { __typename: 'PermissionError', code: string, message: string }
    | { __typename: 'UnprocessableError', code: string, message: string }
   };

export type WatchBookingStatusSubscriptionVariables = Exact<{
  after?: string | number | null | undefined;
}>;


export type WatchBookingStatusSubscription = { bookingStatusChanged: { eventId: string, type: string, occurredAt: string, booking: { id: string, status: BookingStatus, scheduledFor: string, provider: { id: string, name: string } } } };

export type WatchAccessCodeRedeemedSubscriptionVariables = Exact<{
  after?: string | number | null | undefined;
}>;


export type WatchAccessCodeRedeemedSubscription = { accessCodeRedeemed: { eventId: string, occurredAt: string, accessCodeId: string, status: AccessCodeStatus, redeemedAt: string | null, provider: { id: string, name: string } | null } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const GetCurrentSessionDocument = new TypedDocumentString(`
    query GetCurrentSession {
  currentClientSession {
    id
    scopes
    expiresAt
    client {
      id
      firstName
      lastName
    }
  }
}
    `, {"hash":"sha256:6fce8566933014a053c00c1c253dd22aba7a8aec4b81e63b2989782c3cb6719f"}) as unknown as TypedDocumentString<GetCurrentSessionQuery, GetCurrentSessionQueryVariables>;
export const GetClientDocument = new TypedDocumentString(`
    query GetClient($id: ID!) {
  client(id: $id) {
    id
    firstName
    lastName
    email
    phone
    externalId
    createdAt
    credits {
      balance
      currency
    }
  }
}
    `, {"hash":"sha256:c5e1775f4038a058f406940ff5e80cb8525512dc0975051d2ba3b9589b40e888"}) as unknown as TypedDocumentString<GetClientQuery, GetClientQueryVariables>;
export const GetIssuedPassDocument = new TypedDocumentString(`
    query GetIssuedPass($clientId: ID!) {
  issuedPass(clientId: $clientId) {
    id
    status
    passcode
    paymentModel
    startDate
    expiresAt
    paidThrough
    pass {
      id
      name
      currency
    }
    categories {
      type
      tiers
      visitsAllowed
      visitsUsed
      creditAllocated
    }
  }
}
    `, {"hash":"sha256:a48ddf83f9280cceceba467877023c7e4e0262402f6983fd29286c594761e089"}) as unknown as TypedDocumentString<GetIssuedPassQuery, GetIssuedPassQueryVariables>;
export const ListBookingsDocument = new TypedDocumentString(`
    query ListBookings($clientId: ID!, $first: Int, $after: String, $status: String, $type: String) {
  client(id: $clientId) {
    id
    bookings(first: $first, after: $after, status: $status, type: $type) {
      edges {
        cursor
        node {
          id
          type
          status
          serviceName
          date
          time
          scheduledFor
          creditsCharged
          visitsDeducted
          copayAmount
          currency
          createdAt
          classInstanceId
          provider {
            id
            name
            category
            address
            city
            timezone
          }
          refund {
            policy
            creditsRefunded
            visitsRestored
            copayRefunded
            currency
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
    `, {"hash":"sha256:9bcf1b9d6e0870ce2e70019867648c3d0cd50f1c496b245175d0302c1c93805c"}) as unknown as TypedDocumentString<ListBookingsQuery, ListBookingsQueryVariables>;
export const ListProvidersDocument = new TypedDocumentString(`
    query ListProviders($near: NearInput, $category: ProviderCategory, $tier: String, $first: Int, $after: String) {
  providers(
    near: $near
    category: $category
    tier: $tier
    first: $first
    after: $after
  ) {
    edges {
      cursor
      node {
        id
        name
        category
        tier
        description
        address
        city
        country
        timezone
        lat
        lon
        distanceKm
        cancellationPolicy {
          freeCancellationHours
          lateCancellationRefundPercent
        }
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `, {"hash":"sha256:eff344dbcfe8108148672d3465e8e6c88cc428663f5a7ae86e842f8c74de7508"}) as unknown as TypedDocumentString<ListProvidersQuery, ListProvidersQueryVariables>;
export const ListClassesDocument = new TypedDocumentString(`
    query ListClasses($near: NearInput, $date: Date, $category: String, $providerId: ID, $first: Int, $after: String, $instances: Int = 10) {
  classes(
    near: $near
    date: $date
    category: $category
    providerId: $providerId
    first: $first
    after: $after
  ) {
    edges {
      cursor
      node {
        id
        name
        description
        durationMinutes
        distanceKm
        category {
          id
          name
        }
        provider {
          id
          name
          address
          city
          timezone
        }
        instances(first: $instances) {
          edges {
            node {
              id
              date
              time
              startsAt
              status
              capacity
              spotsRemaining
            }
          }
        }
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `, {"hash":"sha256:71499a8bbd62a8e4bea78d9036940824792153479fd249855350a8ee29fcfad8"}) as unknown as TypedDocumentString<ListClassesQuery, ListClassesQueryVariables>;
export const GetClassDocument = new TypedDocumentString(`
    query GetClass($id: ID!, $first: Int = 20, $after: String) {
  class(id: $id) {
    id
    name
    description
    durationMinutes
    category {
      id
      name
    }
    provider {
      id
      name
      address
      city
      timezone
      cancellationPolicy {
        freeCancellationHours
        lateCancellationRefundPercent
      }
    }
    instances(first: $first, after: $after) {
      edges {
        node {
          id
          date
          time
          startsAt
          status
          capacity
          spotsRemaining
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
    `, {"hash":"sha256:4aeaa65fd2f41dee63468f0f0d442ec6d6a9be38099eb832a05b787d28aefc73"}) as unknown as TypedDocumentString<GetClassQuery, GetClassQueryVariables>;
export const GetSpaAvailabilityDocument = new TypedDocumentString(`
    query GetSpaAvailability($spaId: ID!, $date: Date!, $serviceIds: [ID!]!) {
  spaAvailability(spaId: $spaId, date: $date, serviceIds: $serviceIds) {
    date
    timezone
    durationMinutes
    spa {
      id
      name
    }
    services {
      id
      name
      durationMinutes
      credits
      copayAmount
      currency
    }
    slots {
      time
      startsAt
      available
    }
  }
}
    `, {"hash":"sha256:e65a5a0ed1634521e54a66a3e94f661858191aadfda79b16c8ef2182825d5e33"}) as unknown as TypedDocumentString<GetSpaAvailabilityQuery, GetSpaAvailabilityQueryVariables>;
export const BookClassDocument = new TypedDocumentString(`
    mutation BookClass($input: BookClassInput!) {
  bookClass(input: $input) {
    __typename
    ... on ClassBookingInitiation {
      status
      message
      className
      providerName
      date
      time
      scheduledFor
      visitsDeducted
      visitsUsed
      maxVisits
      copayRequired
      additionalVisitsRequired
      costPerVisit
      currency
      sessionId
      sessionExpiresAt
      copayOptions {
        id
        name
        maxVisits
        visitDurationDays
        clientCopayAmount
        clientCopayCredits
        currency
      }
      booking {
        id
        status
        scheduledFor
      }
    }
    ... on Error {
      code
      message
    }
    ... on InputError {
      param
    }
    ... on NotFoundError {
      param
    }
  }
}
    `, {"hash":"sha256:ac490763faa89a1a00065f4f4400e1e6261c76c7387cce89ed17027e75527075"}) as unknown as TypedDocumentString<BookClassMutation, BookClassMutationVariables>;
export const BookSpaDocument = new TypedDocumentString(`
    mutation BookSpa($input: BookSpaInput!) {
  bookSpa(input: $input) {
    __typename
    ... on SpaBookingInitiation {
      status
      message
      serviceName
      providerName
      date
      time
      scheduledFor
      copayRequired
      copayAmount
      copayCredits
      currency
      sessionId
      sessionExpiresAt
      booking {
        id
        status
        scheduledFor
        creditsCharged
      }
    }
    ... on Error {
      code
      message
    }
    ... on InputError {
      param
    }
    ... on NotFoundError {
      param
    }
  }
}
    `, {"hash":"sha256:9dec35f9608a1b73db4296bb29ae4a5cec9cd2f84c6d624f4ee232b5fbf050ad"}) as unknown as TypedDocumentString<BookSpaMutation, BookSpaMutationVariables>;
export const CancelBookingDocument = new TypedDocumentString(`
    mutation CancelBooking($input: CancelBookingInput!) {
  cancelBooking(input: $input) {
    __typename
    ... on BookingPayload {
      booking {
        id
        status
        refund {
          policy
          creditsRefunded
          visitsRestored
          copayRefunded
          currency
        }
      }
    }
    ... on Error {
      code
      message
    }
    ... on InputError {
      param
    }
    ... on NotFoundError {
      param
    }
  }
}
    `, {"hash":"sha256:aec23f0a463a74b46716b107ddc92a9821febb3ccec1e7ecc03086c055e75db5"}) as unknown as TypedDocumentString<CancelBookingMutation, CancelBookingMutationVariables>;
export const CreateAccessCodeDocument = new TypedDocumentString(`
    mutation CreateAccessCode($input: CreateAccessCodeInput!) {
  createAccessCode(input: $input) {
    __typename
    ... on AccessCode {
      id
      code
      qrCode
      status
      expiresAt
      createdAt
      issuedPassId
      provider {
        id
        name
      }
    }
    ... on AccessCodeSession {
      sessionId
      sessionExpiresAt
      message
      copayRequired
      additionalVisitsRequired
      visitsUsed
      maxVisits
      costPerVisit
      copayOptions {
        id
        name
        maxVisits
        visitDurationDays
        clientCopayAmount
        clientCopayCredits
        currency
      }
    }
    ... on Error {
      code
      message
    }
    ... on InputError {
      param
    }
    ... on NotFoundError {
      param
    }
  }
}
    `, {"hash":"sha256:12f525f32536cd89e8054dce2edf27cb68fedf485db3cc915a4bdac9f50b1456"}) as unknown as TypedDocumentString<CreateAccessCodeMutation, CreateAccessCodeMutationVariables>;
export const WatchBookingStatusDocument = new TypedDocumentString(`
    subscription WatchBookingStatus($after: ID) {
  bookingStatusChanged(after: $after) {
    eventId
    type
    occurredAt
    booking {
      id
      status
      scheduledFor
      provider {
        id
        name
      }
    }
  }
}
    `, {"hash":"sha256:64bd12653622a69521d690512cdf2fc1b5de292dbd42c2ef325f232ed656e4af"}) as unknown as TypedDocumentString<WatchBookingStatusSubscription, WatchBookingStatusSubscriptionVariables>;
export const WatchAccessCodeRedeemedDocument = new TypedDocumentString(`
    subscription WatchAccessCodeRedeemed($after: ID) {
  accessCodeRedeemed(after: $after) {
    eventId
    occurredAt
    accessCodeId
    status
    redeemedAt
    provider {
      id
      name
    }
  }
}
    `, {"hash":"sha256:310d206527f2964ee9e34c3fc71605151d0f59a6e07ef8284dccf69b8b9bf151"}) as unknown as TypedDocumentString<WatchAccessCodeRedeemedSubscription, WatchAccessCodeRedeemedSubscriptionVariables>;