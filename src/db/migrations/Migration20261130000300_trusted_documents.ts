import { Migration } from '@mikro-orm/migrations';

// Trusted documents (docs/partner-guide.md "Trusted documents"): the GraphQL documents a reseller
// registered for its frontends, by the SHA-256 of their exact text, and the reseller's setting that
// holds its client-session callers to them. Additive only: the release before this one never names either.
export class Migration20261130000300_trusted_documents extends Migration {
  override name = 'Migration20261130000300_trusted_documents';

  up(): void {
    this.addSql(`
      create table trusted_document (
        id text primary key,
        reseller_id text not null references reseller (id),
        -- hex SHA-256 of the document's UTF-8 text: the id a request names it by (documentId "sha256:<hex>")
        sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
        document text not null,
        created_at timestamptz not null,
        unique (reseller_id, sha256)
      );
      create index trusted_document_reseller_idx on trusted_document (reseller_id, id desc);
    `);
    this.addSql(`alter table reseller add column trusted_documents_only boolean not null default false;`);
  }
}
