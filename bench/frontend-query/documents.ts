// The frontend "my bookings" screen's one request (issue 32, "Speed"; bench/README.md "Frontend
// query"): a client, a page of its bookings with each booking's provider, and its current pass
// with the pass's categories. test/graphql/frontend-query.test.ts proves ours costs the same SQL
// statements for any page size; bench/frontend-query.ts measures both documents at load.

/** Ours (schema.graphql): `client(id:)` and `issuedPass(clientId:)` side by side. */
export const OURS = `query MyBookings($clientId: ID!, $first: Int!) {
  client(id: $clientId) {
    id firstName lastName
    bookings(first: $first) {
      edges { node { id status type date time scheduledFor serviceName provider { id name city } } }
      pageInfo { hasNextPage endCursor }
    }
  }
  issuedPass(clientId: $clientId) {
    id status expiresAt
    categories { type tiers visitsAllowed visitsUsed creditAllocated }
    pass { id name }
  }
}`;

/**
 * The same shape in PostGraphile's own naming (bench/frontend-query/postgraphile.ts; its relations come from the
 * foreign keys): the newest issued pass stands for the current one, its package's `categories` (JSON) and
 * `visitsUsed` (JSON) for our categories with their visits.
 */
export const POSTGRAPHILE = `query MyBookings($clientId: String!, $first: Int!) {
  clientByRowId(rowId: $clientId) {
    rowId firstName lastName
    bookingsByClientId(first: $first, orderBy: PRIMARY_KEY_DESC) {
      edges { node { rowId status type localDate localTime startsAt serviceName providerByProviderId { rowId name city } } }
      pageInfo { hasNextPage endCursor }
    }
    issuedPassesByClientId(first: 1, orderBy: PRIMARY_KEY_DESC) {
      nodes { rowId status expiresAt visitsUsed passPackageByPassId { rowId name categories } }
    }
  }
}`;
