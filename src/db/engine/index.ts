// The data engine's front door (README.md in this folder): how the rest of the code sends SQL and
// opens transactions. Everything else in this folder is how, and may reach into pg, Kysely and
// MikroORM; nothing outside it does (eslint.config.js).

/** Statements: a read, a write inside a transaction, a write sent with a later statement, a transaction's last write with its COMMIT. */
export {
  preparedRead,
  preparedWrite,
  queueWrite,
  lastWriteWithCommit,
  flushQueuedWrites,
  sqlText,
  type Deferred,
} from './prepared-read.ts';
/** Statements of one purpose each: a lock on a name, a setting for the transaction, a write that commits by itself, a read that tolerates lag. */
export { advisoryXactLock, setLocal, autocommitWrite, lagTolerantRead } from './purposes.ts';
/** Read replicas: which reads may go to one, and for how long a caller's own write keeps its reads on the primary. */
export { lagTolerant, READ_YOUR_WRITES_MS, type ConnectionType } from './replicas.ts';
/** Transactions: the only ways to open one, and the rules at their edges. */
export {
  inTransaction,
  withTransaction,
  inSavepoint,
  deferredToCommit,
  settleDeferred,
  assertInTransaction,
  isRetryableConflict,
  retryingConflicts,
  RETRY_ATTEMPTS,
  type TxCtx,
  type TxEm,
} from './transaction.ts';
/** Rows read by SQL as plain objects of an entity's shape. */
export { plainRows, plainRow, joinedColumns, plainJoined, insertPlain, type Plain } from './plain-rows.ts';
export { engineOptions, ENGINE_PARTS, partsLeftOut, type EnginePart } from './options.ts';
export { checkEngineVersions, ENGINE_WRITTEN_AGAINST } from './versions.ts';
export type { EngineMode } from './mode.ts';
