// Who a request comes from, as the per-address bounds count it (sign-in pages, realtime streams
// and connects, sockets). An IPv6 host is usually given a whole /64 (often more), so counting
// single IPv6 addresses would let one host rotate through billions of them: IPv6 addresses are
// grouped by their first CLIENT_IPV6_PREFIX_LENGTH bits. An IPv4-mapped IPv6 address (how a
// dual-stack socket reports an IPv4 peer) is that IPv4 address.
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

export interface ClientAddressing {
  /** X-Forwarded-For's right-most entry is the client's address (one trusted proxy in front). */
  trustProxy: boolean;
  /** IPv6 addresses sharing this many leading bits count as one client. */
  ipv6PrefixLength: number;
}

/** The client's address as koa's `ctx.ip` reads it with one trusted proxy (`maxIpsCount` 1). */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers['x-forwarded-for'] : undefined;
  const last = typeof forwarded === 'string' ? forwarded.slice(forwarded.lastIndexOf(',') + 1).trim() : '';
  return last || req.socket.remoteAddress || '';
}

/**
 * The key an address is counted under: an IPv4 address itself, an IPv6 one as its network
 * (`2001:db8:1:2::/64`). Anything that is not an IP address (no socket address) is its own key.
 */
export function addressGroup(address: string, ipv6PrefixLength: number): string {
  // Most peers are plain IPv4: no parse.
  if (!address.includes(':') || !ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${ip.toNormalizedString()}/${ipv6PrefixLength}`);
  return `${network.toRFC5952String()}/${ipv6PrefixLength}`;
}

/** The key of the client behind a request. */
export function clientGroup(req: IncomingMessage, { trustProxy, ipv6PrefixLength }: ClientAddressing): string {
  return addressGroup(clientAddress(req, trustProxy), ipv6PrefixLength);
}
