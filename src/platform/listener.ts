import pg from 'pg';
import type { Logger } from './logger.ts';

// One dedicated connection per process that LISTENs on a channel (docs/architecture.md "Live
// events"). It is not the pool's: a LISTEN holds its connection for as long as the process wants
// notifications, and a pooled connection goes back to serve other statements. When it is lost it
// is made again with a backoff (250 ms doubling to 10 s); the log says once that it went down and
// once that it is back, and `reconnected` lets the owner catch up on what it missed meanwhile.

const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 10_000;

export interface ListenerOptions {
  url: string;
  channel: string;
  /** The connection's application_name (pg_stat_activity) and the name its log lines give; 'event listener' unless told. */
  name?: string;
  log: Logger;
  /** A notification's payload (the channel's only). */
  notified(payload: string): void;
  /** Called after every connection made, the first included: whatever was notified while none was listening is read from the table. */
  connected(): void;
  /** Called when the connection is lost (or the first one could not be made): nothing is notified until `connected` again. */
  lost?(): void;
}

export interface Listener {
  /** Resolves once the first connection listens (or failed once: the retries go on in the background). */
  readonly started: Promise<void>;
  stop(): Promise<void>;
}

export function listen(opts: ListenerOptions): Listener {
  const name = opts.name ?? 'event listener';
  let client: pg.Client | undefined;
  let stopped = false;
  let down = false;
  let retryMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;

  const lost = (err: unknown) => {
    if (stopped) return;
    opts.lost?.();
    if (!down) opts.log.warn({ err, channel: opts.channel }, `${name} connection lost; reconnecting`);
    down = true;
    timer = setTimeout(() => void connect(), retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const next = new pg.Client({ connectionString: opts.url, application_name: name, keepAlive: true });
    // One reconnect per connection given up, whether its error, its end or the failed start tells first.
    let given = false;
    const giveUp = (err: unknown) => {
      if (given) return;
      given = true;
      if (client === next) client = undefined;
      void discard(next);
      lost(err);
    };
    next.on('error', giveUp);
    next.on('end', () => giveUp(new Error('connection ended')));
    next.on('notification', (n) => {
      if (n.channel === opts.channel) opts.notified(n.payload ?? '');
    });
    try {
      await next.connect();
      // The channel name is ours, a fixed identifier: no quoting needed beyond it.
      await next.query(`listen ${opts.channel}`);
    } catch (err) {
      return giveUp(err);
    }
    if (stopped) return void discard(next);
    client = next;
    retryMs = FIRST_RETRY_MS;
    if (down) opts.log.info({ channel: opts.channel }, `${name} connection back`);
    down = false;
    opts.connected();
  };

  return {
    started: connect(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const current = client;
      client = undefined;
      if (current) await discard(current);
    },
  };
}

/**
 * Ends a client given up. Its socket may still report an error afterwards (a terminated backend
 * sends FATAL, then the socket closes): a listener stays to hear it, or it would be thrown as an
 * uncaught exception and take the process down.
 */
function discard(client: pg.Client): Promise<void> {
  client.removeAllListeners();
  client.on('error', () => undefined);
  return client.end().catch(() => undefined);
}
