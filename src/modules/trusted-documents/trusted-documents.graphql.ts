import { builder } from '../../graphql/builder.ts';
import { documentCheck } from '../../graphql/document-check.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { connectionCost } from '../../graphql/loaders.ts';
import { runMutation, runQuery } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import {
  deleteTrustedDocument,
  getTrustedDocumentSettings,
  listTrustedDocuments,
  registerTrustedDocuments,
  setTrustedDocumentsOnly,
  type Reseller,
  type TrustedDocument,
  type TrustedDocumentRegistration,
} from './trusted-documents.service.ts';

// Trusted documents on GraphQL (docs/partner-guide.md "Trusted documents"): the use cases of
// trusted-documents.rest.ts. A document is checked against the schema that runs this request.

const TrustedDocumentRef = builder.objectRef<TrustedDocument>('TrustedDocument').implement({
  description: 'A GraphQL document the reseller registered for its frontends, run by `documentId: "sha256:<sha256>"`.',
  fields: (t) => ({
    id: t.id({ description: 'Trusted document id (`tdoc_…`); also its cursor.', resolve: (d) => d.id }),
    sha256: t.string({ description: "The hex SHA-256 of the document's exact UTF-8 text.", resolve: (d) => d.sha256 }),
    document: t.string({ description: 'The document, exactly as registered.', resolve: (d) => d.document }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was registered.', resolve: (d) => d.createdAt }),
  }),
});

const TrustedDocumentRegistrationRef = builder.objectRef<TrustedDocumentRegistration>('TrustedDocumentRegistration').implement({
  description: 'The documents a registration named, each once, in the order sent.',
  fields: (t) => ({
    documents: t.field({
      type: [TrustedDocumentRef],
      description: 'Every document sent, new or registered before.',
      resolve: (r) => r.documents,
    }),
    registered: t.int({ description: 'How many of them were new; the others were registered already.', resolve: (r) => r.registered }),
  }),
});

const DeletedTrustedDocumentRef = builder.objectRef<TrustedDocument>('DeletedTrustedDocument').implement({
  description: 'A trusted document that was deleted: requests naming it are refused within 1 s on every process.',
  fields: (t) => ({
    sha256: t.string({ description: 'The deleted document.', resolve: (d) => d.sha256 }),
    deleted: t.boolean({ description: 'Always true.', resolve: () => true }),
  }),
});

const TrustedDocumentSettingsRef = builder.objectRef<Reseller>('TrustedDocumentSettings').implement({
  description: "The reseller's trusted-documents setting.",
  fields: (t) => ({
    trustedDocumentsOnly: t.boolean({
      description: "true: client-session tokens run only this reseller's trusted documents; API keys run any document.",
      resolve: (r) => r.trustedDocumentsOnly,
    }),
  }),
});

const TrustedDocumentInputRef = builder.inputType('TrustedDocumentInput', {
  description: 'A document to register, with the SHA-256 its manifest names (checked against the text) when there is one.',
  fields: (t) => ({
    document: t.string({ required: true, description: 'A GraphQL document, exactly as the frontend sends it.' }),
    sha256: t.string({ description: "The document's SHA-256 (64 hex digits), as a manifest names it." }),
  }),
});

const RegisterTrustedDocumentsInputRef = builder.inputType('RegisterTrustedDocumentsInput', {
  description: 'Documents to register, all or none (V3 POST /trusted_documents).',
  fields: (t) => ({
    documents: t.field({
      type: [TrustedDocumentInputRef],
      required: true,
      description: 'The documents (1–500, each at most 100 KB).',
    }),
  }),
});

builder.queryFields((t) => ({
  trustedDocuments: t.connection({
    type: TrustedDocumentRef,
    description: "The reseller's trusted documents, newest first (as GET /trusted_documents).",
    authScopes: { reseller: true },
    complexity: connectionCost,
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        return toConnection(await listTrustedDocuments(ctx, page), page);
      }),
  }),
  trustedDocumentSettings: t.field({
    type: TrustedDocumentSettingsRef,
    description: "Whether client-session tokens run only this reseller's trusted documents.",
    authScopes: { reseller: true },
    resolve: (_, __, ctx) => runQuery(() => getTrustedDocumentSettings(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  registerTrustedDocuments: t.field({
    type: TrustedDocumentRegistrationRef,
    description:
      'Registers documents for this reseller, all or none: each must parse and validate against the schema (else an ' +
      'InputError naming it, nothing written); one registered already is left as it is. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: RegisterTrustedDocumentsInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'RegisterTrustedDocumentsResult' } },
    resolve: (_, { input }, ctx, info) =>
      runMutation(ctx, (c) =>
        registerTrustedDocuments(
          c,
          { documents: input.documents.map((d) => ({ document: d.document, ...(d.sha256 != null ? { sha256: d.sha256 } : {}) })) },
          documentCheck(info.schema),
        ),
      ),
  }),
  deleteTrustedDocument: t.field({
    type: DeletedTrustedDocumentRef,
    description: 'Deletes a trusted document: requests naming it are refused within 1 s on every process.',
    authScopes: { reseller: true },
    args: { sha256: t.arg.string({ required: true, description: "The document's SHA-256 (64 hex digits)." }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'DeleteTrustedDocumentResult' } },
    resolve: (_, { sha256 }, ctx) => runMutation(ctx, (c) => deleteTrustedDocument(c, sha256)),
  }),
  setTrustedDocumentsOnly: t.field({
    type: TrustedDocumentSettingsRef,
    description:
      "Holds client-session tokens to this reseller's trusted documents (`enabled: true`), or lets them send any " +
      'document again. API keys are never held to them. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { enabled: t.arg.boolean({ required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'SetTrustedDocumentsOnlyResult' } },
    resolve: (_, { enabled }, ctx) => runMutation(ctx, (c) => setTrustedDocumentsOnly(c, { trusted_documents_only: enabled })),
  }),
}));
