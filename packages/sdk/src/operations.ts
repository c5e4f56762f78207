import { graphql } from './gql/index.ts';

// Every operation a client-session frontend runs (docs/partner-guide.md "Client sessions"), typed by
// `npm run sdk:generate` from the repo's schema.graphql. Each document is also in
// gql/persisted-documents.json, the list a reseller registers as its frontend's trusted documents.
// Mutations answer a result union: select `__typename` and the Error members' fields, so a refusal
// (`class_full`, `already_cancelled` …) is data to branch on, not an exception (docs/errors.md "GraphQL").

/**
 * The session the token is: the client it acts for (a frontend needs no client id beside the
 * token), its scopes (what to offer: BOOK, ACCESS_CODE) and when it expires (when to ask your
 * server for a new one). null only for an API key.
 */
export const GetCurrentSession = graphql(`
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
`);

/** The client the session acts for, with its credit wallet. */
export const GetClient = graphql(`
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
`);

/** The client's current issued pass, with what each category allows and has used. */
export const GetIssuedPass = graphql(`
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
`);

/** A page of the client's bookings, newest first, each with its provider; page on with `after: pageInfo.endCursor`. */
export const ListBookings = graphql(`
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
`);

/** Providers nearest first within `near.radiusKm` (or newest first without `near`). */
export const ListProviders = graphql(`
  query ListProviders($near: NearInput, $category: ProviderCategory, $tier: String, $first: Int, $after: String) {
    providers(near: $near, category: $category, tier: $tier, first: $first, after: $after) {
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
`);

/** Classes near a point, with a scheduled instance on `date` when it is given; each with its next instances. */
export const ListClasses = graphql(`
  query ListClasses($near: NearInput, $date: Date, $category: String, $providerId: ID, $first: Int, $after: String, $instances: Int = 10) {
    classes(near: $near, date: $date, category: $category, providerId: $providerId, first: $first, after: $after) {
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
`);

/** One class, with its provider and a page of its instances (the ids `bookClass` takes). */
export const GetClass = graphql(`
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
`);

/** A spa's appointment slots on a local date for the given services (the `time`s `bookSpa` takes). */
export const GetSpaAvailability = graphql(`
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
`);

/** Books a class instance: a booking now, or a session to confirm when a co-pay or more visits are needed. */
export const BookClass = graphql(`
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
`);

/** Books a spa appointment: a booking now, or a session to confirm when a co-pay is needed. */
export const BookSpa = graphql(`
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
`);

/** Cancels a booking; the provider's cancellation policy decides the refund. */
export const CancelBooking = graphql(`
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
`);

/** An access code (and its QR code) the client shows at a provider, or a session when a co-pay is needed first. */
export const CreateAccessCode = graphql(`
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
`);

/**
 * The client's bookings' status changes as they commit (docs/partner-guide.md "Live booking status"):
 * run with `client.subscribe`. `eventId` is also the SSE id a resume starts after.
 */
export const WatchBookingStatus = graphql(`
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
`);

/** The client's access codes as a provider redeems them (a visit checked in), run with `client.subscribe`. */
export const WatchAccessCodeRedeemed = graphql(`
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
`);
