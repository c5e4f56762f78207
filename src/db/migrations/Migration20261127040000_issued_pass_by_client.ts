import { Migration } from '@mikro-orm/migrations';

// A client's newest issued pass (every booking, access code and pass read that names a client by
// `client_id`: src/modules/passes/passes.service.ts getOwnClientWithCurrentPass) was read through
// issued_pass_reseller_idx, the reseller's passes newest first, until one of this client's came up:
// a cost that grew with the passes the reseller issued after it. The partial unique index on
// client_id serves only passes that are not cancelled, and the read wants the newest of any status.
// Built in the migration's transaction (no CONCURRENTLY): writes to issued_pass wait while it builds.
export class Migration20261127040000_issued_pass_by_client extends Migration {
  override name = 'Migration20261127040000_issued_pass_by_client';

  up(): void {
    this.addSql('create index issued_pass_client_idx on issued_pass (client_id, id desc);');
  }
}
