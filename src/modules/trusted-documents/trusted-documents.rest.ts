import { documentCheck } from '../../graphql/document-check.ts';
import { graphqlSchema } from '../../graphql/schema.ts';
import { listRoute } from '../../rest/list-route.ts';
import { defineRoutes } from '../../rest/route.ts';
import {
  deleteTrustedDocument,
  getTrustedDocumentSettings,
  listTrustedDocuments,
  registerTrustedDocuments,
  registerTrustedDocumentsInput,
  setTrustedDocumentsOnly,
  trustedDocumentSettingsInput,
  type RegisterTrustedDocumentsInput,
  type TrustedDocumentSettingsInput,
} from './trusted-documents.service.ts';
import {
  deletedTrustedDocumentSchema,
  presentDeletedTrustedDocument,
  presentTrustedDocument,
  presentTrustedDocumentRegistration,
  presentTrustedDocumentSettings,
  trustedDocumentRegistrationSchema,
  trustedDocumentSchema,
  trustedDocumentSettingsSchema,
} from './trusted-documents.presenter.ts';

const authErrors = ['validation_error', 'invalid_api_key', 'account_disabled'] as const;
const idempotencyErrors = ['idempotency_key_reused', 'idempotency_request_in_progress'] as const;

// Trusted documents (docs/partner-guide.md "Trusted documents"): a document is checked against the
// schema /graphql serves, the one GraphQL runs it with.
export const trustedDocumentsRoutes = defineRoutes([
  listRoute({
    path: '/trusted_documents',
    operationId: 'listTrustedDocuments',
    tag: 'Trusted documents',
    summary: "Get the reseller's trusted documents, newest first",
    item: trustedDocumentSchema,
    description: 'A list of `trusted_document` objects',
    errors: [...authErrors],
    url: () => '/v3/api/business/reseller/trusted_documents',
    message: 'Trusted documents retrieved successfully',
    list: listTrustedDocuments,
    present: presentTrustedDocument,
  }),
  {
    method: 'POST',
    path: '/trusted_documents',
    operationId: 'registerTrustedDocuments',
    tag: 'Trusted documents',
    summary:
      'Register GraphQL documents, all or none: each must parse and validate against the schema; one registered already is left as it is',
    body: registerTrustedDocumentsInput,
    idempotent: true,
    success: { status: 200, description: 'The `trusted_document_registration`', schema: trustedDocumentRegistrationSchema },
    errors: [...authErrors, ...idempotencyErrors],
    async handler(ctx, { body }) {
      const registration = await registerTrustedDocuments(ctx, body as RegisterTrustedDocumentsInput, documentCheck(graphqlSchema()));
      return { status: 200, body: presentTrustedDocumentRegistration(registration) };
    },
  },
  {
    method: 'DELETE',
    path: '/trusted_documents/{sha256}',
    operationId: 'deleteTrustedDocument',
    tag: 'Trusted documents',
    summary: 'Delete a trusted document: requests naming it are refused within 1 s on every process',
    success: { status: 200, description: 'The deleted document', schema: deletedTrustedDocumentSchema },
    errors: [...authErrors, 'resource_not_found'],
    async handler(ctx, { params }) {
      return { status: 200, body: presentDeletedTrustedDocument(await deleteTrustedDocument(ctx, params.sha256)) };
    },
  },
  {
    method: 'GET',
    path: '/settings/trusted_documents',
    operationId: 'getTrustedDocumentSettings',
    tag: 'Trusted documents',
    summary: "Whether client-session tokens run only the reseller's trusted documents",
    success: { status: 200, description: 'The `trusted_document_settings`', schema: trustedDocumentSettingsSchema },
    errors: [...authErrors],
    async handler(ctx) {
      return { status: 200, body: presentTrustedDocumentSettings(await getTrustedDocumentSettings(ctx)) };
    },
  },
  {
    method: 'POST',
    path: '/settings/trusted_documents',
    operationId: 'setTrustedDocumentsOnly',
    tag: 'Trusted documents',
    summary: "Hold client-session tokens to the reseller's trusted documents (`trusted_documents_only: true`), or not; API keys never are",
    body: trustedDocumentSettingsInput,
    idempotent: true,
    success: { status: 200, description: 'The `trusted_document_settings`', schema: trustedDocumentSettingsSchema },
    errors: [...authErrors, ...idempotencyErrors],
    async handler(ctx, { body }) {
      return {
        status: 200,
        body: presentTrustedDocumentSettings(await setTrustedDocumentsOnly(ctx, body as TrustedDocumentSettingsInput)),
      };
    },
  },
]);
