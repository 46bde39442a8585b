import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../config.ts';
import { peerAddressesOf } from './options.ts';

// docs/operations/configuration.md, "Peer addresses"
describe('the peer addresses a media node checks', () => {
  // a node announcing a public address: loopback, private networks and their IPv6 forms are denied
  const rtc = loadConfig({ RTC_ROLES: 'media', RTC_MEDIA_PUBLIC_IP: '203.0.113.7', RTC_MEDIA_ICE_IPV6: 'true', RTC_MEDIA_ALLOWED_PEER_IPS: '10.1.0.0/16' }).rtc!;
  const { mayCheck, mayOffer } = peerAddressesOf(rtc);

  it('checks public addresses and allowed ones only', () => {
    assert.deepEqual(['198.51.100.1', '2a00:1450::1', '10.1.2.3', '::ffff:10.1.2.3'].map(mayCheck), [true, true, true, true]);
    assert.deepEqual(['10.0.0.5', '127.0.0.1', '::1', 'fd00::2', 'fe80::1'].map(mayCheck), [false, false, false, false, false]);
  });

  it('judges a mapped or NAT64 address by the IPv4 address it leads to, and denies the other IPv6 forms of one', () => {
    for (const address of ['::ffff:a00:5', '0:0:0:0:0:ffff:10.0.0.5', '64:ff9b::a00:5', '64:ff9b::7f00:1', '::a00:5', '64:ff9b:1::a00:5', '2002:a00:5::1']) {
      assert.equal(mayCheck(address), false, address);
    }
    assert.equal(mayCheck('64:ff9b::c633:6401'), true);
  });

  it('never checks a host name, which the system would resolve unchecked; an offer keeps .local names for the stack to resolve', () => {
    for (const name of ['localhost', 'example.com', 'abc.local', '']) assert.equal(mayCheck(name), false, name);
    assert.deepEqual(['localhost', 'example.com', 'x.local.example.com', ''].map(mayOffer), [false, false, false, false]);
    assert.deepEqual(['1f4712db-ea17-4bcf-a596-105139dfd8bf.local', 'Printer.LOCAL', '198.51.100.1'].map(mayOffer), [true, true, true]);
    assert.equal(mayOffer('10.0.0.5'), false);
  });
});
