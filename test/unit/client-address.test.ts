import { describe, expect, it } from '@jest/globals';
import { clientBucket } from '../../lib/client-address';

describe('the client a per-address limit counts', () => {
  it('is an IPv4 address as it is, also when IPv4-mapped', () => {
    expect(clientBucket('192.0.2.7')).toBe('192.0.2.7');
    expect(clientBucket('::ffff:192.0.2.7')).toBe('192.0.2.7');
  });

  it('is the /64 of an IPv6 address, however it is written', () => {
    const a = clientBucket('2001:db8:1:2:aaaa:bbbb:cccc:dddd');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:0DB8:0001:0002::1')).toBe(a);
    expect(clientBucket('2001:db8:1:2::ffff:1.2.3.4')).toBe(a);
    expect(clientBucket('2001:db8:1:3::1')).not.toBe(a);
    expect(clientBucket('::1')).toBe('0:0:0:0::/64');
    expect(clientBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
