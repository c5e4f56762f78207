import type { IncomingMessage } from 'node:http';

/**
 * The client's address (docs/operator-guide.md "Rate limits"): the socket's, unless TRUST_PROXY names how many
 * proxies in front of the service append to X-Forwarded-For; then the entry the outermost of them
 * appended, counted from the right, since anything to its left was written by the client itself.
 */
export function clientAddress(req: IncomingMessage, trustProxy: number): string {
  const socket = req.socket.remoteAddress ?? 'unknown';
  if (trustProxy === 0) return socket;
  const forwarded = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  return hops[hops.length - trustProxy] ?? hops[0] ?? socket;
}
