import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A GraphQL document a reseller registered for its frontends (`tdoc_…`, docs/partner-guide.md
 * "Trusted documents"), named by `sha256`, the hex SHA-256 of its exact UTF-8 text.
 */
export const TrustedDocumentSchema = defineEntity({
  name: 'TrustedDocument',
  tableName: 'trusted_document',
  properties: {
    id: p.string().primary(),
    resellerId: p.string(),
    sha256: p.string(),
    document: p.text(),
    createdAt: p.datetime(),
  },
});
export type TrustedDocument = InferEntity<typeof TrustedDocumentSchema>;
