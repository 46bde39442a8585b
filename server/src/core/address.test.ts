import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createAddressSet, embeddedIpv4, isPrivateAddress, normalizeAddress, parseCidr, resolveClientAddress } from './address.ts';

describe('parseCidr', () => {
  const VALID: readonly (readonly [string, { address: string; prefix: number; family: 4 | 6 }])[] = [
    ['203.0.113.0/24', { address: '203.0.113.0', prefix: 24, family: 4 }],
    ['203.0.113.7', { address: '203.0.113.7', prefix: 32, family: 4 }],
    ['0.0.0.0/0', { address: '0.0.0.0', prefix: 0, family: 4 }],
    ['10.0.0.1/32', { address: '10.0.0.1', prefix: 32, family: 4 }],
    ['2001:db8::/32', { address: '2001:db8::', prefix: 32, family: 6 }],
    ['2001:db8::1', { address: '2001:db8::1', prefix: 128, family: 6 }],
    ['::/0', { address: '::', prefix: 0, family: 6 }],
    ['::ffff:198.51.100.0/120', { address: '::ffff:198.51.100.0', prefix: 120, family: 6 }],
  ];
  for (const [text, expected] of VALID) {
    it(`parses ${text}`, () => {
      assert.deepEqual(parseCidr(text), expected);
    });
  }

  const INVALID = ['', '/', '203.0.113.0/', '203.0.113.0/33', '203.0.113.0/-1', '203.0.113.0/1.5', '203.0.113.0/ 8',
    '2001:db8::/129', '2001:db8::/1000', '256.0.0.1', '01.2.3.4', ' 10.0.0.1', '10.0.0.1 ', 'example.com/24',
    '10.0.0.0/8/8', '10.0.0', '[2001:db8::1]', '2001:db8:::1/64', 'localhost'];
  for (const text of INVALID) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assert.equal(parseCidr(text), undefined);
    });
  }

  it('never throws on arbitrary text (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (text) => {
      const parsed = parseCidr(text);
      if (parsed) assert.ok(parsed.prefix <= (parsed.family === 4 ? 32 : 128));
    }));
  });
});

describe('normalizeAddress', () => {
  it('turns an IPv4-mapped IPv6 address into its IPv4 form', () => {
    assert.equal(normalizeAddress('::ffff:127.0.0.1'), '127.0.0.1');
  });
  it('turns every spelling of an IPv4-mapped address into its IPv4 form', () => {
    for (const mapped of ['::ffff:a00:5', '::FFFF:10.0.0.5', '0:0:0:0:0:ffff:10.0.0.5', '0000:0000:0000:0000:0000:ffff:0a00:0005', '::ffff:0a00:0005']) {
      assert.equal(normalizeAddress(mapped), '10.0.0.5', mapped);
    }
  });
  it('leaves IPv4 and other IPv6 addresses alone', () => {
    assert.equal(normalizeAddress('127.0.0.1'), '127.0.0.1');
    assert.equal(normalizeAddress('2001:db8::1'), '2001:db8::1');
    assert.equal(normalizeAddress('::ffff:zz'), '::ffff:zz');
  });
});

describe('createAddressSet', () => {
  const set = createAddressSet(['203.0.113.0/24', '198.51.100.7', '2001:db8:aa::/48', '2001:db8:cc::1']);

  const MEMBERS = ['203.0.113.0', '203.0.113.255', '198.51.100.7', '::ffff:203.0.113.9', '2001:db8:aa::',
    '2001:db8:aa:ffff:ffff:ffff:ffff:ffff', '2001:DB8:AA::1', '2001:0db8:00aa:0000:0000:0000:0000:0001', '2001:db8:cc::1'];
  for (const address of MEMBERS) {
    it(`contains ${address}`, () => {
      assert.equal(set.has(address), true);
    });
  }

  const OUTSIDERS = ['203.0.112.255', '203.0.114.0', '198.51.100.6', '198.51.100.8', '2001:db8:ab::', '2001:db8:a9:ffff::1',
    '2001:db8:cc::2', '::1', '127.0.0.1', '', 'not-an-address', '203.0.113.1/32'];
  for (const address of OUTSIDERS) {
    it(`does not contain ${JSON.stringify(address)}`, () => {
      assert.equal(set.has(address), false);
    });
  }

  it('contains nothing when empty', () => {
    const empty = createAddressSet([]);
    assert.equal(empty.has('127.0.0.1'), false);
    assert.equal(empty.has('2001:db8::1'), false);
  });

  it('matches a mapped or NAT64 address (64:ff9b::/96) by the IPv4 address it leads to', () => {
    const private4 = createAddressSet(['10.0.0.0/8', '127.0.0.0/8']);
    for (const address of ['::ffff:a00:5', '0:0:0:0:0:ffff:10.0.0.5', '64:ff9b::a00:5', '64:ff9b::10.0.0.5', '64:FF9B:0:0:0:0:7f00:1']) {
      assert.equal(private4.has(address), true, address);
    }
    for (const address of ['64:ff9b::cb00:7107', '64:ff9b:1::a00:5', '::a00:5', '2002:a00:5::1']) {
      assert.equal(private4.has(address), false, address);
    }
    // the NAT64 prefix itself still matches as a range
    assert.equal(createAddressSet(['64:ff9b::/96']).has('64:ff9b::cb00:7107'), true);
    assert.deepEqual(['64:ff9b::a00:5', '::ffff:a00:5', '64:ff9b:1::a00:5', '2001:db8::a00:5', 'x'].map(embeddedIpv4),
      ['10.0.0.5', '10.0.0.5', undefined, undefined, undefined]);
  });

  it('counts every IPv6 form that can lead to a private IPv4 address as not public', () => {
    for (const address of ['64:ff9b::a00:5', '::ffff:a00:5', '::a00:5', '::ffff:0:a00:5', '64:ff9b:1::a00:5', '2002:a00:5::1']) {
      assert.equal(isPrivateAddress(address), true, address);
    }
    assert.equal(isPrivateAddress('2a00:1450::1'), false);
  });

  it('matches any IPv4 address against 0.0.0.0/0 and no IPv6 address', () => {
    const any4 = createAddressSet(['0.0.0.0/0']);
    assert.equal(any4.has('192.0.2.1'), true);
    assert.equal(any4.has('2001:db8::1'), false);
  });

  it('refuses an invalid CIDR with a TypeError (a caller bug: CIDRs are validated on input)', () => {
    assert.throws(() => createAddressSet(['10.0.0.0/33']), TypeError);
  });

  it('agrees with a bit-level prefix comparison for IPv4 (property)', () => {
    const toInt = (a: readonly number[]): number => ((a[0]! << 24) | (a[1]! << 16) | (a[2]! << 8) | a[3]!) >>> 0;
    const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
    fc.assert(fc.property(octets, fc.integer({ min: 0, max: 32 }), octets, (net, prefix, probe) => {
      const s = createAddressSet([`${net.join('.')}/${prefix}`]);
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      const expected = ((toInt(net) & mask) >>> 0) === ((toInt(probe) & mask) >>> 0);
      assert.equal(s.has(probe.join('.')), expected);
    }));
  });
});

describe('resolveClientAddress (X-Forwarded-For)', () => {
  const trusted = createAddressSet(['127.0.0.0/8', '10.0.0.0/8']);

  const CASES: readonly (readonly [string, string, string | undefined, boolean, string])[] = [
    ['uses the peer when no proxy is trusted', '192.0.2.1', '203.0.113.5', false, '192.0.2.1'],
    ['uses the peer when it is not a trusted proxy', '192.0.2.1', '203.0.113.5', true, '192.0.2.1'],
    ['uses the peer when a trusted proxy sends no header', '127.0.0.1', undefined, true, '127.0.0.1'],
    ['believes a trusted proxy', '127.0.0.1', '203.0.113.5', true, '203.0.113.5'],
    ['believes a trusted proxy for an IPv6 client', '127.0.0.1', '2001:db8::5', true, '2001:db8::5'],
    ['normalises an IPv4-mapped peer before checking trust', '::ffff:127.0.0.1', '203.0.113.5', true, '203.0.113.5'],
    ['normalises an IPv4-mapped forwarded address', '127.0.0.1', '::ffff:203.0.113.5', true, '203.0.113.5'],
    ['takes the right-most hop that is not a trusted proxy', '127.0.0.1', '198.51.100.1, 203.0.113.5, 10.1.1.1', true, '203.0.113.5'],
    ['ignores what a client prepends', '127.0.0.1', '127.0.0.9, 203.0.113.5', true, '203.0.113.5'],
    ['trims spaces around hops', '127.0.0.1', '  203.0.113.5  ,10.0.0.2 ', true, '203.0.113.5'],
    ['falls back to the peer when a hop is not an address', '127.0.0.1', '203.0.113.5, unknown', true, '127.0.0.1'],
    ['falls back to the peer on an empty header', '127.0.0.1', '', true, '127.0.0.1'],
    ['falls back to the peer when a hop carries a port', '127.0.0.1', '203.0.113.5:4711', true, '127.0.0.1'],
    ['falls back to the peer when every hop is a trusted proxy', '127.0.0.1', '10.0.0.1, 127.0.0.2', true, '127.0.0.1'],
  ];
  for (const [what, peer, forwardedFor, trust, expected] of CASES) {
    it(what, () => {
      assert.equal(resolveClientAddress(peer, forwardedFor, trust ? trusted : undefined), expected);
    });
  }

  it('never returns a trusted proxy address chosen by the client, nor throws (property)', () => {
    const hop = fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 12 }));
    fc.assert(fc.property(fc.array(hop, { maxLength: 6 }), (hops) => {
      const resolved = resolveClientAddress('127.0.0.1', hops.join(', '), trusted);
      assert.ok(resolved === '127.0.0.1' || !trusted.has(resolved), resolved);
    }));
  });
});
