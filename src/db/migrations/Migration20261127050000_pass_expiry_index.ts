import { Migration } from '@mikro-orm/migrations';

// The pass expiry sweep (src/modules/passes/expiry.service.ts, every SESSION_SWEEP_MS) takes the
// ACTIVE passes past `expires_at`, earliest first; with no index on `expires_at` it read every
// issued pass at each run. A partial index like those of the other sweeps (booking sessions,
// access codes, hosted sessions) holds only the ACTIVE ones, in expiry order.
// Built in the migration's transaction (no CONCURRENTLY): writes to issued_pass wait while it builds.
export class Migration20261127050000_pass_expiry_index extends Migration {
  override name = 'Migration20261127050000_pass_expiry_index';

  up(): void {
    this.addSql(`create index issued_pass_active_expiry_idx on issued_pass (expires_at) where status = 'ACTIVE';`);
  }
}
