import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { validationError } from '../../platform/errors.ts';

// Where webhooks may go (docs/partner-guide.md "Webhooks"): http or https, no credentials in the URL, and no
// private, loopback, link-local or unique-local target unless WEBHOOK_ALLOW_PRIVATE_URLS=true. An
// address written in the URL is refused when the endpoint is created; a name is resolved at each
// delivery and refused then, on the very addresses the connection would use.

const privateRanges = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  privateRanges.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['64:ff9b::', 96], // NAT64: an IPv4 address behind a translator, any of them (RFC 6052)
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: an IPv4 address tunnelled
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: an IPv4 address embedded in the prefix
  ['fe80::', 10], // link-local
  ['fc00::', 7], // unique-local
  ['ff00::', 8], // multicast
] as const)
  privateRanges.addSubnet(net, prefix, 'ipv6');
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d, also written ::ffff:7f00:1) is judged by the IPv4
// ranges: BlockList maps it. The translation and tunnel prefixes are refused whole: which IPv4
// address they lead to depends on a gateway this service cannot see.

/** The refusal's words: what was refused and the setting that would allow it. */
export const PRIVATE_REFUSAL =
  'is a private, loopback, link-local, unique-local or translated address; webhooks go to public addresses ' +
  '(WEBHOOK_ALLOW_PRIVATE_URLS=true allows them, for development)';

/** Whether an IP address is one webhooks may not reach without WEBHOOK_ALLOW_PRIVATE_URLS. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** `localhost` and its subdomains, in any case and with a root's trailing dot (`localhost.`). */
const isLocalName = (host: string): boolean => {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
};

export const MAX_URL_LENGTH = 2048;

/** The endpoint URL as stored (WHATWG-normalised), or 400 `validation_error` naming `param`. */
export function checkEndpointUrl(raw: string, allowPrivate: boolean, param = 'url'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError(param, 'Expected an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw validationError(param, 'Expected an http:// or https:// URL');
  if (url.username !== '' || url.password !== '') throw validationError(param, 'The URL must not carry credentials (user:password@)');
  if (url.href.length > MAX_URL_LENGTH) throw validationError(param, `The URL must be at most ${MAX_URL_LENGTH} characters`);
  const host = hostOf(url);
  if (!allowPrivate && (isPrivateAddress(host) || isLocalName(host.toLowerCase()))) {
    throw validationError(param, `The URL's host ${host} ${PRIVATE_REFUSAL}`);
  }
  return url.href;
}

/** Why a delivery to `url` may not go out before any connection is made, or undefined when it may. */
export function refusedTarget(url: URL, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const host = hostOf(url);
  if (isPrivateAddress(host) || isLocalName(host.toLowerCase()))
    return `refused: ${host} is a private address (WEBHOOK_ALLOW_PRIVATE_URLS)`;
  return undefined;
}

/**
 * The lookup a delivery connects with: the name is resolved once, and when any of its addresses
 * is private (and WEBHOOK_ALLOW_PRIVATE_URLS is off) the connection fails before it is made.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((
    hostname: string,
    options: dns.LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
  ) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refused = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (refused) {
        const error: NodeJS.ErrnoException = new Error(
          `refused: ${hostname} resolves to the private address ${refused.address} (WEBHOOK_ALLOW_PRIVATE_URLS)`,
        );
        error.code = 'EPRIVATEADDRESS';
        return callback(error, '');
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}
