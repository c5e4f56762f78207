import { z } from 'zod';
import { unixSeconds } from '../../platform/clock.ts';
import type { Reseller, TrustedDocument, TrustedDocumentRegistration } from './trusted-documents.service.ts';

// V3 presenters of trusted documents (docs/partner-guide.md "Trusted documents"): allow-lists from rows to the wire.

export const trustedDocumentSchema = z
  .object({
    object: z.literal('trusted_document').describe('Always `trusted_document`'),
    id: z.string().describe('Trusted document id (`tdoc_…`): the cursor of GET /trusted_documents'),
    sha256: z.string().describe('The hex SHA-256 of the document\'s exact UTF-8 text: send `documentId: "sha256:<sha256>"` to run it'),
    document: z.string().describe('The document, exactly as registered'),
    created: z.int().min(0).describe('When it was registered, Unix seconds'),
  })
  .meta({ id: 'TrustedDocument', description: 'A GraphQL document the reseller registered for its frontends' });
export type TrustedDocumentObject = z.infer<typeof trustedDocumentSchema>;

export function presentTrustedDocument(d: TrustedDocument): TrustedDocumentObject {
  return { object: 'trusted_document', id: d.id, sha256: d.sha256, document: d.document, created: unixSeconds(d.createdAt) };
}

export const trustedDocumentRegistrationSchema = z
  .object({
    object: z.literal('trusted_document_registration').describe('Always `trusted_document_registration`'),
    documents: z.array(trustedDocumentSchema).describe('Every document sent, each once, in the order sent: new or registered before'),
    registered: z.int().min(0).describe('How many of them were new; the others were registered already'),
  })
  .meta({ id: 'TrustedDocumentRegistration', description: 'The documents a registration named' });

export function presentTrustedDocumentRegistration(r: TrustedDocumentRegistration): z.infer<typeof trustedDocumentRegistrationSchema> {
  return { object: 'trusted_document_registration', documents: r.documents.map(presentTrustedDocument), registered: r.registered };
}

export const deletedTrustedDocumentSchema = z
  .object({
    object: z.literal('trusted_document').describe('Always `trusted_document`'),
    sha256: z.string().describe('The deleted document'),
    deleted: z.literal(true).describe('Always true'),
  })
  .meta({ id: 'DeletedTrustedDocument', description: 'A trusted document that was deleted' });

export const presentDeletedTrustedDocument = (d: TrustedDocument): z.infer<typeof deletedTrustedDocumentSchema> => ({
  object: 'trusted_document',
  sha256: d.sha256,
  deleted: true,
});

export const trustedDocumentSettingsSchema = z
  .object({
    object: z.literal('trusted_document_settings').describe('Always `trusted_document_settings`'),
    trusted_documents_only: z
      .boolean()
      .describe("true: client-session tokens run only this reseller's trusted documents; API keys run any document"),
  })
  .meta({ id: 'TrustedDocumentSettings', description: "The reseller's trusted-documents setting" });

export function presentTrustedDocumentSettings(r: Reseller): z.infer<typeof trustedDocumentSettingsSchema> {
  return { object: 'trusted_document_settings', trusted_documents_only: r.trustedDocumentsOnly };
}
