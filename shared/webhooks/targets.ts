import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Which webhook targets the service may call. `public` (the default) refuses any host that
 * resolves to a loopback, private, link-local, multicast or unspecified address, so that an
 * endpoint cannot be pointed at the service's own network (SSRF); `loopback` also allows
 * 127.0.0.0/8 and ::1 (the tests and `npm start`); `private` allows every address.
 */
export type TargetPolicy = 'public' | 'loopback' | 'private';

export interface TargetSettings {
  targets: TargetPolicy;
  /** Whether `http:` URLs are accepted (otherwise https only). */
  allowHttp: boolean;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const internal = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  internal.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  internal.addSubnet(net, bits, 'ipv6');

/** `::ffff:10.0.0.1` is 10.0.0.1. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function addressClass(raw: string): 'loopback' | 'internal' | 'public' {
  const { address, family } = unmapped(raw);
  if (loopback.check(address, family)) return 'loopback';
  if (internal.check(address, family)) return 'internal';
  return 'public';
}

export function addressAllowed(address: string, policy: TargetPolicy): boolean {
  const cls = addressClass(address);
  if (cls === 'public' || policy === 'private') return true;
  return cls === 'loopback' && policy === 'loopback';
}

/** Why a URL cannot be a webhook target by its form alone (before any DNS), or null. */
export function urlRefusal(raw: string, settings: TargetSettings): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.protocol === 'http:' && !settings.allowHttp) return 'must be an https URL (http is not allowed here)';
  if (url.username || url.password) return 'must not carry credentials';
  return null;
}

/**
 * Why a URL cannot be called now, without a DNS lookup: its form, or a host that is an address
 * the policy refuses. A host name's addresses are checked when the call connects (guardedLookup),
 * which node skips for an address written in the URL.
 */
export function callRefusal(raw: string, settings: TargetSettings): string | null {
  const form = urlRefusal(raw, settings);
  if (form) return form;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !addressAllowed(host, settings.targets))
    return `${host} is a ${addressClass(host)} address, which webhook targets may not use here`;
  return null;
}

/** How long a check waits for DNS before it takes the host as one that does not resolve. */
const LOOKUP_WAIT_MS = 5_000;

/** Every address a host resolves to. */
function resolveAll(host: string): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return Promise.resolve([{ address: bare, family: isIP(bare) }]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no DNS answer for ${bare}`)), LOOKUP_WAIT_MS);
    dnsLookup(bare, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(addresses);
    });
  });
}

/**
 * Why a URL cannot be a webhook target, or null: its form, then every address its host resolves
 * to (one refused address refuses the host, since a later lookup could answer it).
 */
export async function targetRefusal(
  raw: string,
  settings: TargetSettings,
  options: { what?: string; unresolvable?: 'refused' | 'allowed' } = {},
): Promise<string | null> {
  const what = options.what ?? 'webhook targets';
  const form = urlRefusal(raw, settings);
  if (form) return form;
  const host = new URL(raw).hostname;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    return options.unresolvable === 'allowed' ? null : `host ${host} does not resolve`;
  }
  const refused = addresses.find((a) => !addressAllowed(a.address, settings.targets));
  if (refused)
    return `resolves to ${refused.address}, a ${addressClass(refused.address)} address, which ${what} may not use here`;
  return null;
}

/**
 * A `lookup` for node:http(s) requests that refuses a disallowed address at connect time, so a
 * host that resolved to a public address when checked cannot switch to an internal one for the
 * actual call (DNS rebinding).
 */
export function guardedLookup(policy: TargetPolicy) {
  return (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !addressAllowed(a.address, policy));
      if (refused) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused.address}, not an allowed target`);
        e.code = 'ETARGETREFUSED';
        return callback(e, '', 0);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
