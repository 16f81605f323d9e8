import ipaddr from 'ipaddr.js';
import net from 'node:net';

/**
 * Which IP addresses the SSRF-safe client (lib/http/safe-fetch.ts) may connect to: public unicast only, whatever
 * the notation (decimal, octal, hex IPv4; IPv4 carried inside IPv6). Pure: no DNS.
 */

export interface AddressClass {
  allowed: boolean;
  reason?: string;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const cidrs = (...ranges: string[]): Cidr[] => ranges.map((range) => ipaddr.parseCIDR(range));

// Checked before ipaddr.js's own range names, first match wins: cloud metadata endpoints it does not know, and finer
// reasons than its catch-all 'reserved' (and 'rfc6052', which lumps local-use NAT64 in with the well-known prefix).
const NAMED_RANGES: Record<string, Cidr[]> = {
  metadata: cidrs(
    '169.254.169.254/32', // AWS, GCP, Azure, OCI, DigitalOcean...
    '100.100.100.200/32', // Alibaba Cloud
    '168.63.129.16/32', // Azure WireServer: publicly numbered but only reachable from inside Azure
    'fd00:ec2::254/128', // AWS IMDS over IPv6
  ),
  teredo: cidrs('2001::/32'), // before 2001::/23 that contains it; tunnels to arbitrary IPv4 behind NATs
  ietf_protocol_assignments: cidrs('192.0.0.0/24', '2001::/23'),
  documentation: cidrs('192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32', '3fff::/20'),
  benchmark: cidrs('198.18.0.0/15'),
  nat64_local: cidrs('64:ff9b:1::/48'), // RFC 8215: translates into the operator's own network
};

// ipaddr.js range names → reason, null for public. Every other name (its 'reserved', SIIT's rfc6145, segment routing,
// and whatever a newer ipaddr.js adds) is refused as 'reserved'. IPv4-mapped and NAT64 never get here (classifyV6).
const RANGE_REASONS: Record<string, string | null> = {
  unicast: null,
  '6to4': null, // only reached once classifyV6 has found the embedded IPv4 public
  as112: null, // globally routed anycast services (RFC 7534, RFC 7450): as public as any other address
  as112v6: null,
  amt: null,
  unspecified: 'unspecified', // connecting to 0.0.0.0 reaches the local host on Linux
  broadcast: 'broadcast',
  multicast: 'multicast',
  loopback: 'loopback',
  linkLocal: 'link_local',
  private: 'private',
  carrierGradeNat: 'carrier_grade_nat',
  uniqueLocal: 'unique_local',
  deprecatedSiteLocal: 'site_local',
  discard: 'discard',
};

const V6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3'); // the only allocated unicast space
const V6_NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96'); // well-known NAT64: the gateway connects to the embedded IPv4
const V6_IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96'); // deprecated ::a.b.c.d

/**
 * Parses IPv4 the way inet_aton and the WHATWG URL parser do: 1 to 4 parts, each decimal, octal (leading 0) or
 * hex (0x), the last part filling the remaining bytes, so `2130706433`, `0177.0.0.1`, `0x7f.1` are all 127.0.0.1.
 * One difference: a bare `0x` part (WHATWG reads 0) is not IPv4 here, so classifyAddress refuses it as not_an_ip.
 */
export function toIPv4(input: string): ipaddr.IPv4 | null {
  // WHATWG URL tolerates one trailing dot (127.0.0.1.), ipaddr.js does not.
  const s = input.endsWith('.') ? input.slice(0, -1) : input;
  return ipaddr.IPv4.isValid(s) ? ipaddr.IPv4.parse(s) : null;
}

/** IPv4 in any notation (see toIPv4) as an unsigned 32-bit number, or null if it is not IPv4. */
export function parseIPv4(input: string): number | null {
  return toIPv4(input)?.octets.reduce((n, octet) => n * 256 + octet, 0) ?? null;
}

/** Parses an IPv6 address (brackets and zone id tolerated), or returns null. */
export function parseIPv6(input: string): ipaddr.IPv6 | null {
  const s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  // Node's strict syntax first: ipaddr.js also takes octal-looking octets in a dotted tail and reads them as decimal
  // (::ffff:0177.0.0.1 would pass as 177.0.0.1).
  if (!net.isIPv6(s) || !ipaddr.IPv6.isValid(s)) return null;
  const addr = ipaddr.IPv6.parse(s);
  // ipaddr.js reads the deprecated IPv4-compatible ::a.b.c.d (glibc's spelling of ::/96) as IPv4-mapped ::ffff:a.b.c.d,
  // which would let ::8.8.8.8 pass as 8.8.8.8.
  if (/^::[^:]*\./.test(s)) return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, addr.parts[6], addr.parts[7]]);
  return addr;
}

function embeddedIPv4(addr: ipaddr.IPv6, byteOffset: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(addr.toByteArray().slice(byteOffset, byteOffset + 4));
}

function byReason(reason: string | null, allowLoopback: boolean): AddressClass {
  if (reason === null || (reason === 'loopback' && allowLoopback)) return { allowed: true };
  return { allowed: false, reason };
}

function rangeReason(addr: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  const named = ipaddr.subnetMatch(addr, NAMED_RANGES, '');
  if (named) return named;
  const range = addr.range();
  return range in RANGE_REASONS ? RANGE_REASONS[range] : 'reserved';
}

function classifyV4(addr: ipaddr.IPv4, allowLoopback: boolean): AddressClass {
  return byReason(rangeReason(addr), allowLoopback);
}

function classifyV6(addr: ipaddr.IPv6, allowLoopback: boolean): AddressClass {
  // Addresses that carry an IPv4 address are judged by it, otherwise ::ffff:10.0.0.1 would slip through.
  if (addr.isIPv4MappedAddress()) return classifyV4(addr.toIPv4Address(), allowLoopback);
  if (addr.match(V6_NAT64)) return classifyV4(embeddedIPv4(addr, 12), false);
  if (addr.range() === '6to4') {
    const embedded = classifyV4(embeddedIPv4(addr, 2), false); // 2002:AABB:CCDD::/48 tunnels to AA.BB.CC.DD
    if (!embedded.allowed) return embedded;
  }
  const reason = rangeReason(addr);
  if (reason !== null) return byReason(reason, allowLoopback);
  // Deprecated IPv4-compatible ::a.b.c.d: report the embedded class if it is internal, refuse in any case.
  if (addr.match(V6_IPV4_COMPATIBLE)) {
    const embedded = classifyV4(embeddedIPv4(addr, 12), false);
    return { allowed: false, reason: embedded.allowed ? 'reserved' : embedded.reason };
  }
  // ipaddr.js calls all of the rest 'unicast', unallocated space included.
  if (!addr.match(V6_GLOBAL_UNICAST)) return { allowed: false, reason: 'reserved' };
  return { allowed: true };
}

/**
 * Decides whether an IP address may be connected to. Pure: no DNS. Anything that is not an IP address in some
 * notation is refused (`not_an_ip`), so callers fail closed.
 */
export function classifyAddress(ip: string, opts: { allowLoopback?: boolean } = {}): AddressClass {
  const allowLoopback = opts.allowLoopback === true;
  const v6 = parseIPv6(ip.trim());
  if (v6 !== null) return classifyV6(v6, allowLoopback);
  const v4 = toIPv4(ip.trim());
  if (v4 !== null) return classifyV4(v4, allowLoopback);
  return { allowed: false, reason: 'not_an_ip' };
}
