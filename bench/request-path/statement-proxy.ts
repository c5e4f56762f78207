import net from 'node:net';

// Counts the SQL statements a server process sends, at the PostgreSQL wire protocol: a TCP proxy
// between the process and the database that reads the frontend messages it forwards unchanged.
// A simple Query ('Q') is one statement; in the extended protocol each Execute ('E') is one,
// named by the Parse ('P') behind its Bind ('B'). Whatever sends the SQL (the ORM, raw `pg`, a
// cache's own connection) is counted the same way, BEGIN/COMMIT/SAVEPOINT included.
// An exchange ends at each Sync or simple Query (PostgreSQL answers each with a ReadyForQuery); a
// round trip starts when a connection sends one while none of its earlier ones is unanswered, so
// statements pipelined behind unanswered ones (src/db/engine/edges-along.ts) share its round trip.

export interface StatementProxy {
  /** The port to put in the server's DATABASE_URL instead of the database's. */
  port: number;
  /** Statements seen so far, in order, across all connections. */
  readonly statements: readonly string[];
  /** Exchanges so far, across all connections: each Sync or simple Query, which PostgreSQL answers with one ReadyForQuery. */
  readonly exchanges: number;
  /** Round trips so far, across all connections: exchanges sent while the connection waited for no ReadyForQuery. */
  readonly roundTrips: number;
  close(): Promise<void>;
}

export async function startStatementProxy(upstream: { host: string; port: number }): Promise<StatementProxy> {
  const statements: string[] = [];
  let exchanges = 0;
  let roundTrips = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const db = net.connect(upstream.port, upstream.host);
    sockets.add(client).add(db);
    for (const s of [client, db]) s.on('close', () => sockets.delete(s));
    let unanswered = 0;
    const reader = frontendReader(
      (sql) => statements.push(sql),
      () => {
        exchanges++;
        if (unanswered++ === 0) roundTrips++;
      },
    );
    client.on('data', (chunk: Buffer) => {
      reader(chunk);
      db.write(chunk);
    });
    // The ReadyForQuery that ends the start-up answers nothing the reader counted.
    const answers = readyForQueryReader(() => {
      unanswered = Math.max(0, unanswered - 1);
    });
    db.on('data', (chunk: Buffer) => answers(chunk));
    db.pipe(client);
    client.on('error', () => db.destroy());
    db.on('error', () => client.destroy());
    client.on('close', () => db.destroy());
    db.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    statements,
    get exchanges() {
      return exchanges;
    },
    get roundTrips() {
      return roundTrips;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Splits a client's byte stream into protocol messages and reports each statement it executes, and each exchange it ends. */
function frontendReader(onStatement: (sql: string) => void, onExchange: () => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let started = false; // the startup packet (and an SSL/GSS request before it) has no type byte
  const prepared = new Map<string, string>(); // statement name → SQL
  const portals = new Map<string, string>(); // portal name → SQL
  const cstrings = (body: Buffer, count: number): string[] => {
    const out: string[] = [];
    let at = 0;
    for (let i = 0; i < count; i++) {
      const end = body.indexOf(0, at);
      out.push(body.toString('utf8', at, end));
      at = end + 1;
    }
    return out;
  };
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (!started) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        // 80877103 asks for SSL, 80877104 for GSS encryption: the real startup packet follows.
        if (code !== 80877103 && code !== 80877104) started = true;
        buffered = buffered.subarray(length);
        continue;
      }
      if (buffered.length < 5) return;
      const length = buffered.readInt32BE(1);
      if (buffered.length < 1 + length) return;
      const type = String.fromCharCode(buffered[0]);
      const body = buffered.subarray(5, 1 + length);
      buffered = buffered.subarray(1 + length);
      if (type === 'Q') {
        onStatement(cstrings(body, 1)[0]);
        onExchange();
      } else if (type === 'S') onExchange();
      else if (type === 'P') {
        const [name, sql] = cstrings(body, 2);
        prepared.set(name, sql);
      } else if (type === 'B') {
        const [portal, name] = cstrings(body, 2);
        portals.set(portal, prepared.get(name) ?? '(unknown prepared statement)');
      } else if (type === 'E') onStatement(portals.get(cstrings(body, 1)[0]) ?? '(unknown portal)');
    }
  };
}

/** Splits the database's byte stream into protocol messages and reports each ReadyForQuery ('Z'). The bench's connections ask for no SSL, so every message has a type byte. */
function readyForQueryReader(onReady: () => void): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 5) {
      const length = buffered.readInt32BE(1);
      if (buffered.length < 1 + length) return;
      if (buffered[0] === 0x5a) onReady();
      buffered = buffered.subarray(1 + length);
    }
  };
}
