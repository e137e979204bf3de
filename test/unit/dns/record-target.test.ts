import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiAddressError, recordTargetFor } from '../../../core/dns/index.js';

describe('recordTargetFor', () => {
  it.each([
    ['10.0.0.7', { type: 'A', value: '10.0.0.7' }],
    ['http://127.0.0.2:31443', { type: 'A', value: '127.0.0.2' }],
    ['2001:db8::1', { type: 'AAAA', value: '2001:db8::1' }],
    ['[2001:DB8::1]', { type: 'AAAA', value: '2001:db8::1' }],
    ['https://[2001:db8::1]:443/', { type: 'AAAA', value: '2001:db8::1' }],
    ['a1b2.elb.eu-west-1.amazonaws.com', { type: 'CNAME', value: 'a1b2.elb.eu-west-1.amazonaws.com' }],
    ['https://LB.Example.COM.:6443', { type: 'CNAME', value: 'lb.example.com' }],
  ])('%s', (address, expected) => {
    expect(recordTargetFor(address)).toEqual(expected);
  });

  it.each(['', 'http://', 'not a host', '999.1.1.1', 'a..b', '-lb.example', `${'x'.repeat(64)}.example`])(
    'rejects "%s"',
    (address) => {
      expect(() => recordTargetFor(address)).toThrow(ApiAddressError);
    },
  );

  it('gives A for every IPv4 address, AAAA for every IPv6 address, bare or in a URL', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), (ip, port) => {
        expect(recordTargetFor(ip)).toEqual({ type: 'A', value: ip });
        expect(recordTargetFor(`https://${ip}:${port}`)).toEqual({ type: 'A', value: ip });
      }),
    );
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        expect(recordTargetFor(ip).type).toBe('AAAA');
        // The URL form canonicalises the address; both must name the same address family.
        expect(recordTargetFor(`https://[${ip}]:443`).type).toBe('AAAA');
      }),
    );
  });

  it('gives CNAME for every host name that is not an address', () => {
    fc.assert(
      fc.property(fc.domain(), (name) => {
        fc.pre(!/^[0-9.]+$/.test(name));
        expect(recordTargetFor(name)).toEqual({ type: 'CNAME', value: name.toLowerCase() });
      }),
    );
  });
});
