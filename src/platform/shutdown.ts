import type { Server, ServerResponse } from 'node:http';
import type { Logger } from './logger.ts';

// The HTTP side of a graceful stop (docs/operator-guide.md "Stopping an instance"): first a drain,
// while /readyz answers 503 so the load balancer takes the instance out and every other request
// is still served; then open subscription streams are ended, the listener closes and the requests
// in flight finish.

/** How long requests still in flight when the listener closes may take before their sockets are cut. */
export const IN_FLIGHT_LIMIT_MS = 30_000;

/**
 * The server's side of a stop: whether it began (then /readyz answers 503), and the requests it is
 * answering. From the start of the drain every answer closes its connection (`Connection: close`),
 * so keep-alive clients and proxies open their next connection elsewhere instead of finding this
 * one closed under a request when the listener goes.
 */
export class Draining {
  started = false;
  private readonly open = new Set<ServerResponse>();
  private readonly streamEnders: (() => void)[] = [];

  /** `end` ends the server's open streams (subscriptions): they never finish by themselves, so the drain's end ends them. */
  endsStreams(end: () => void): void {
    this.streamEnders.push(end);
  }

  /** Called at the end of the drain, before the listener closes: each open stream gets its last message and ends. */
  endStreams(): void {
    for (const end of this.streamEnders) end();
  }

  get inFlight(): number {
    return this.open.size;
  }

  /** Called by the server for every request. */
  track(res: ServerResponse): void {
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
    if (this.started) closeWhenAnswered(res);
  }

  begin(): void {
    this.started = true;
    for (const res of this.open) closeWhenAnswered(res);
  }
}

function closeWhenAnswered(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
  // Its headers promised keep-alive: end the connection once the answer is complete.
  else res.once('finish', () => res.req.socket.end());
}

/**
 * Drains for `drainMs`, then closes the listener and idle connections and waits for the requests
 * in flight, at most IN_FLIGHT_LIMIT_MS; one log line per phase.
 */
export async function drainAndClose(
  server: Server,
  draining: Draining,
  opts: { drainMs: number; log: Logger; inFlightLimitMs?: number },
): Promise<void> {
  draining.begin();
  if (opts.drainMs > 0) await new Promise((r) => setTimeout(r, opts.drainMs));
  // Subscription streams stay open until ended: ended here, they count among the requests that finish below.
  draining.endStreams();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections waiting for a request would hold close() open until they time out.
  server.closeIdleConnections();
  opts.log.info({ in_flight: draining.inFlight }, 'listener closed');
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<'cut'>((resolve) => (timer = setTimeout(() => resolve('cut'), opts.inFlightLimitMs ?? IN_FLIGHT_LIMIT_MS)));
  const outcome = await Promise.race([closed, limit]);
  clearTimeout(timer);
  if (outcome === 'cut') {
    const cut = draining.inFlight;
    server.closeAllConnections();
    await closed;
    opts.log.warn({ cut }, 'in-flight requests cut at the time limit');
  } else opts.log.info('in-flight requests finished');
}
