import { PostgreSqlConnection, PostgreSqlDriver, type Configuration } from '@mikro-orm/postgresql';
import { markTuned } from './mode.ts';
import { sendQueuedWrites } from './prepared-read.ts';

// MikroORM's PostgreSQL driver, with one change: a statement MikroORM sends in a transaction (a
// find, a flush of the unit of work, em.execute, a savepoint) first sends the writes the
// transaction has queued (src/db/engine/prepared-read.ts queueWrite), so it sees them and their
// order holds. Queued writes otherwise go with a later prepared statement; without this, a flush
// that references a queued row (a rescheduled booking's `rescheduled_to`) would run before it.

class QueueSendingConnection extends PostgreSqlConnection {
  override async execute<T>(...args: Parameters<PostgreSqlConnection['execute']>): Promise<T> {
    const transaction = args[3];
    if (transaction) await sendQueuedWrites(this, transaction);
    return super.execute<never>(...args) as Promise<T>;
  }
}

export class QueueSendingDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    // The connection MikroORM made has not connected yet (it connects on first use); replace it.
    Object.assign(this, {
      connection: new QueueSendingConnection(this.config),
      replicas: this.createReplicas((replica) => new QueueSendingConnection(this.config, replica, 'read')),
    });
    markTuned(this);
  }
}
