/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
export type CategoryType =
  | 'GYM'
  | 'SPA';

export type IssuePassInput = {
  email: string;
  externalId?: string | null | undefined;
  firstName: string;
  lastName: string;
  passId: string | number;
  phone?: string | null | undefined;
  startDate?: string | null | undefined;
};

export type IssuedPassStatus =
  | 'ACTIVE'
  | 'CANCELLED'
  | 'EXPIRED';

export type PassDuration =
  | 'ANNUALLY'
  | 'MONTHLY'
  | 'QUARTERLY';

export type PaymentModel =
  | 'PAYG'
  | 'PREPAID';

export type IssuedPassFieldsFragment = { id: string, passcode: string, status: IssuedPassStatus, paymentModel: PaymentModel, startDate: string, expiresAt: string, createdAt: string, client: { id: string, firstName: string, lastName: string, email: string, creditBalance: number }, pass: { id: string, name: string }, categories: Array<{ type: CategoryType, tiers: Array<string>, visitsAllowed: number | null, visitsUsed: number, creditAllocated: number }> };

export type PassesQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}>;


export type PassesQuery = { passes: { edges: Array<{ cursor: string, node: { id: string, name: string, description: string, price: number, currency: string, duration: PassDuration, paymentModel: PaymentModel, providerCount: number, createdAt: string, categories: Array<{ type: CategoryType, tiers: Array<string>, visitsAllowed: number | null, creditAllocated: number }> } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } } };

export type IssuePassMutationVariables = Exact<{
  input: IssuePassInput;
}>;


export type IssuePassMutation = { issuePass:
    | { __typename: 'ConflictError', code: string, message: string, param: string | null }
    | { __typename: 'IdempotencyError', code: string, message: string, param: string | null }
    | { __typename: 'InputError', code: string, message: string, param: string | null }
    | { __typename: 'IssuedPassPayload', issuedPass: { id: string, passcode: string, status: IssuedPassStatus, paymentModel: PaymentModel, startDate: string, expiresAt: string, createdAt: string, client: { id: string, firstName: string, lastName: string, email: string, creditBalance: number }, pass: { id: string, name: string }, categories: Array<{ type: CategoryType, tiers: Array<string>, visitsAllowed: number | null, visitsUsed: number, creditAllocated: number }> } }
    | { __typename: 'NotFoundError', code: string, message: string, param: string | null }
    | { __typename: 'PermissionError', code: string, message: string, param: string | null }
    | { __typename: 'UnprocessableError', code: string, message: string, param: string | null }
   };

export type IssuedPassQueryVariables = Exact<{
  clientId: string | number;
}>;


export type IssuedPassQuery = { issuedPass: { id: string, passcode: string, status: IssuedPassStatus, paymentModel: PaymentModel, startDate: string, expiresAt: string, createdAt: string, client: { id: string, firstName: string, lastName: string, email: string, creditBalance: number }, pass: { id: string, name: string }, categories: Array<{ type: CategoryType, tiers: Array<string>, visitsAllowed: number | null, visitsUsed: number, creditAllocated: number }> } | null };

export type ClientQueryVariables = Exact<{
  id: string | number;
}>;


export type ClientQuery = { client: { id: string, firstName: string, lastName: string, email: string, phone: string | null, externalId: string | null, creditBalance: number, createdAt: string } | null };

export type NodeQueryVariables = Exact<{
  id: string | number;
}>;


export type NodeQuery = { node:
    | { __typename: 'Booking', id: string }
    | { __typename: 'Class', id: string }
    | { __typename: 'ClassCategory', id: string }
    | { __typename: 'ClassInstance', id: string }
    | { __typename: 'Client', email: string, id: string }
    | { __typename: 'CopayOption', id: string }
    | { __typename: 'CreditPackage', id: string }
    | { __typename: 'Event', id: string }
    | { __typename: 'IssuedPass', passcode: string, status: IssuedPassStatus, id: string }
    | { __typename: 'Pass', name: string, paymentModel: PaymentModel, id: string }
    | { __typename: 'Provider', id: string }
    | { __typename: 'SpaService', id: string }
    | { __typename: 'WebhookEndpoint', id: string }
   | null };
