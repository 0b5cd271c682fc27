// Where webhooks may not go: an app's URL must not make the service reach into its own network
// (the loopback, private ranges, link-local and cloud metadata addresses, and other special-use
// ranges). Checked on the addresses a name resolves to, at each connection (so a name that
// resolves elsewhere later is caught too), and on an address written in the URL itself, unless
// WEBHOOKS_ALLOW_PRIVATE says the operator allows them (development, tests).
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const RANGES: ReadonlyArray<[kind: string, network: string, prefix: number, family: 'ipv4' | 'ipv6']> = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['special-use', '192.0.0.0', 24, 'ipv4'],
  ['special-use', '192.0.2.0', 24, 'ipv4'],
  ['special-use', '198.18.0.0', 15, 'ipv4'],
  ['special-use', '198.51.100.0', 24, 'ipv4'],
  ['special-use', '203.0.113.0', 24, 'ipv4'],
  ['special-use', '224.0.0.0', 3, 'ipv4'],
  ['special-use', '64:ff9b::', 96, 'ipv6'],
  ['special-use', '100::', 64, 'ipv6'],
  ['special-use', '2001:db8::', 32, 'ipv6'],
  ['special-use', 'ff00::', 8, 'ipv6'],
];

const LISTS = new Map<string, BlockList>();
for (const [kind, network, prefix, family] of RANGES) {
  const list = LISTS.get(kind) ?? new BlockList();
  LISTS.set(kind, list);
  list.addSubnet(network, prefix, family);
}

/** The kind of range an IP address is in (`loopback`, `private`, …), or undefined for a public one. */
export function refusedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  for (const [kind, list] of LISTS) if (list.check(address, family === 4 ? 'ipv4' : 'ipv6')) return kind;
  return undefined;
}

/** The receiver's address is one webhooks may not reach: nothing was sent. */
export class AddressRefusedError extends Error {
  readonly code = 'WEBHOOK_ADDRESS_REFUSED';
  constructor(host: string, address: string, kind: string) {
    super(`${host} resolves to ${address}, a ${kind} address: refused (WEBHOOKS_ALLOW_PRIVATE=true allows it)`);
    this.name = 'AddressRefusedError';
  }
}

/** The problem with a URL's host written as an address, if it is a refused one. */
export function refusedHostProblem(hostname: string): string | undefined {
  const address = hostname.replace(/^\[|\]$/g, '');
  const kind = hostname.toLowerCase() === 'localhost' || hostname.toLowerCase().endsWith('.localhost') ? 'loopback' : refusedRange(address);
  return kind && `must not be a ${kind} address (WEBHOOKS_ALLOW_PRIVATE=true allows it)`;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves as usual and fails the connection when an address is
 * refused, before anything is sent (with `all`, as happy eyeballs asks, any refused address fails it).
 */
export function guardedLookup(hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.map((a) => ({ address: a.address, kind: refusedRange(a.address) })).find((a) => a.kind !== undefined);
    if (refused) return callback(new AddressRefusedError(hostname, refused.address, refused.kind!) as NodeJS.ErrnoException, []);
    if ((options as LookupAllOptions).all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
