import type pg from 'pg';

/**
 * Counts a pg client's round trips at its protocol writes: a Sync or a simple Query sent while none
 * of its earlier ones waits for its ReadyForQuery starts one; statements pipelined behind unanswered
 * ones (src/db/engine/edges-along.ts) share it. Also counts the exchanges (each ReadyForQuery).
 */
export function countRoundTrips(client: pg.Client): { roundTrips: () => number; exchanges: () => number } {
  const connection = (client as unknown as { connection: NodeJS.EventEmitter & { sync(): void; query(text: string): void } }).connection;
  let unanswered = 0;
  let roundTrips = 0;
  let exchanges = 0;
  const sent = () => {
    if (unanswered++ === 0) roundTrips++;
  };
  const sync = connection.sync.bind(connection);
  const query = connection.query.bind(connection);
  connection.sync = () => {
    sent();
    sync();
  };
  connection.query = (text) => {
    sent();
    query(text);
  };
  connection.on('readyForQuery', () => {
    exchanges++;
    unanswered = Math.max(0, unanswered - 1);
  });
  return { roundTrips: () => roundTrips, exchanges: () => exchanges };
}
