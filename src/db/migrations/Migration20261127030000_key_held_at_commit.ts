import { Migration } from '@mikro-orm/migrations';

// The idempotency record's statement goes with COMMIT (src/platform/idempotency.ts storeUnderKey),
// so nothing reads its rows before COMMIT: when a live record holds the key, the statement itself
// must fail, so the use case's effects roll back. It calls this function then, which raises the
// unique violation of the record's primary key, the error the key being taken is
// (src/platform/idempotency.ts isKeyHeld).
export class Migration20261127030000_key_held_at_commit extends Migration {
  override name = 'Migration20261127030000_key_held_at_commit';

  up(): void {
    this.addSql(`
      create function idempotency_key_held() returns text language plpgsql volatile as $fn$
      begin
        raise exception using errcode = 'unique_violation', constraint = 'idempotency_record_pkey',
          message = 'The Idempotency-Key is held by a request that stored its response first';
      end
      $fn$;
    `);
  }
}
