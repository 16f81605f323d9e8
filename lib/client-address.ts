import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client a per-address limit counts: an IPv4 address as it is, an IPv6 address by its /64 network. One IPv6
 * subscriber usually holds a whole /64 (often more), so counting single IPv6 addresses would give anyone 2^64 fresh
 * budgets. IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) count as the IPv4 address they carry.
 */
export function clientBucket(ip: string): string {
  const address = ip.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros (zone id dropped). */
function expandIPv6(address: string): string[] {
  const bare = address.split('%')[0].toLowerCase();
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const groupsOf = (part: string | undefined): string[] => {
    if (!part) return [];
    return part.split(':').flatMap((g) => {
      if (!g.includes('.')) return [g];
      // An embedded IPv4 tail (`::1.2.3.4`) is two groups.
      const [a, b, c, d] = g.split('.').map(Number);
      return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    });
  };
  const first = groupsOf(head);
  const last = groupsOf(tail);
  const zeros = tail === undefined ? [] : Array(8 - first.length - last.length).fill('0');
  return [...first, ...zeros, ...last].map((g) => parseInt(g, 16).toString(16));
}
