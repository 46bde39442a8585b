import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { announce, keepInactiveOpen, scanOffer, withoutCandidates } from './sdp.ts';

const OFFER = [
  'v=0', 'o=- 1 2 IN IP4 127.0.0.1', 's=-', 't=0 0', 'a=group:BUNDLE 0 1 2',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111', 'a=mid:0', 'a=fingerprint:sha-256 AA:BB', 'a=sendonly',
  'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=mid:1', 'a=recvonly',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel', 'a=mid:2', '',
].join('\r\n');

describe('SDP offer scan', () => {
  it('finds the fingerprint, the m-lines and the kind of each audio and video mid', () => {
    const scan = scanOffer(OFFER);
    assert.equal(scan?.fingerprint, 'a=fingerprint:sha-256 aa:bb');
    assert.equal(scan?.mlines, 3);
    assert.deepEqual([...scan!.kinds], [['0', 'audio'], ['1', 'video']]);
    // the data channel m-line is there: not media only
    assert.equal(scan?.mediaOnly, false);
    assert.equal(scanOffer(OFFER.replace(/m=application[^]*$/, ''))?.mediaOnly, true);
  });

  it('takes one SHA-256 fingerprint only: none, another algorithm or two certificates are refused', () => {
    assert.equal(scanOffer(OFFER.replace('a=fingerprint:sha-256 AA:BB', 'a=fingerprint:sha-1 AA'))?.fingerprint, undefined);
    assert.equal(scanOffer(OFFER.replace('a=mid:1', 'a=mid:1\r\na=fingerprint:sha-512 CC'))?.fingerprint, undefined);
    assert.equal(scanOffer(OFFER.replace('a=mid:1', 'a=mid:1\r\na=fingerprint:sha-256 CC:DD'))?.fingerprint, undefined);
    // the same certificate on every m-line is one fingerprint
    assert.equal(scanOffer(OFFER.replace('a=mid:1', 'a=mid:1\r\na=fingerprint:sha-256 AA:BB'))?.fingerprint, 'a=fingerprint:sha-256 aa:bb');
    assert.equal(scanOffer('hello'), undefined);
  });

  it('lets the server be the DTLS client only', () => {
    assert.equal(scanOffer(OFFER)?.serverIsDtlsClient, true);
    assert.equal(scanOffer(OFFER.replace('a=mid:0', 'a=mid:0\r\na=setup:actpass'))?.serverIsDtlsClient, true);
    assert.equal(scanOffer(OFFER.replace('a=mid:0', 'a=mid:0\r\na=setup:active'))?.serverIsDtlsClient, false);
  });

  it('counts distinct candidates', () => {
    const line = 'a=candidate:1 1 udp 2130706431 10.0.0.5 40001 typ host';
    assert.equal(scanOffer(OFFER.replace('a=mid:0', `a=mid:0\r\n${line}`).replace('a=mid:1', `a=mid:1\r\n${line}`))?.candidates, 1);
  });
});

describe('line breaks of an offer', () => {
  it('refuses a CR or LF that is not part of a CRLF: werift reads lines by CRLF', () => {
    assert.notEqual(scanOffer(OFFER), undefined);
    assert.equal(scanOffer(OFFER.replace('a=mid:0\r\n', 'a=mid:0\r\na=candidate:f\noo 1 udp 2122260223 10.0.0.6 5000 typ host\r\n')), undefined);
    assert.equal(scanOffer(OFFER.replace('a=mid:0\r\n', 'a=mid:0\r\na=candidate:f\roo 1 udp 2122260223 10.0.0.6 5000 typ host\r\n')), undefined);
    assert.equal(scanOffer(OFFER.replaceAll('\r\n', '\n')), undefined);
  });

  it('filters candidates by the lines werift reads: CRLF, or LF in text without any CRLF', () => {
    const mayOffer = (address: string): boolean => address !== '10.0.0.6';
    const hidden = 'v=0\r\na=candidate:f\noo 1 udp 2122260223 10.0.0.6 5000 typ host\r\na=candidate:2 1 udp 1 192.0.2.1 5000 typ host\r\n';
    assert.equal(withoutCandidates(hidden, mayOffer), 'v=0\r\na=candidate:2 1 udp 1 192.0.2.1 5000 typ host\r\n');
    const lf = 'v=0\na=candidate:1 1 udp 1 10.0.0.6 5000 typ host\na=candidate:2 1 udp 1 192.0.2.1 5000 typ host\n';
    assert.equal(withoutCandidates(lf, mayOffer), 'v=0\na=candidate:2 1 udp 1 192.0.2.1 5000 typ host\n');
  });
});

describe('announced address', () => {
  const answer = [
    'v=0', 'm=video 9 UDP/TLS/RTP/SAVPF 96',
    'a=candidate:1 1 udp 2130706431 10.0.0.5 40001 typ host',
    'a=candidate:2 1 udp 2130706431 127.0.0.1 40001 typ host',
    'a=candidate:3 1 udp 1694498815 198.51.100.1 40001 typ srflx raddr 10.0.0.5 rport 40001',
    '',
  ].join('\r\n');

  it('replaces host candidate addresses by the public address, once per port', () => {
    const out = announce(answer, '203.0.113.7').split('\r\n');
    assert.deepEqual(out.filter((l) => l.startsWith('a=candidate:')), [
      'a=candidate:1 1 udp 2130706431 203.0.113.7 40001 typ host',
      'a=candidate:3 1 udp 1694498815 198.51.100.1 40001 typ srflx raddr 10.0.0.5 rport 40001',
    ]);
  });

  it('leaves the answer alone without a public address', () => {
    assert.equal(announce(answer, undefined), answer);
  });
});

describe('inactive m-lines of the answer', () => {
  const offer = [
    'v=0', 'a=group:BUNDLE 0 1', 'm=audio 9 UDP/TLS/RTP/SAVPF 111', 'a=mid:0', 'a=inactive',
    'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=mid:1', 'a=recvonly', 'm=video 0 UDP/TLS/RTP/SAVPF 96', 'a=mid:2', 'a=inactive', '',
  ].join('\r\n');
  const answer = [
    'v=0', 'a=group:BUNDLE 0 1 2', 'm=audio 0 UDP/TLS/RTP/SAVPF 111', 'a=inactive', 'a=mid:0',
    'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=sendonly', 'a=mid:1', 'm=video 0 UDP/TLS/RTP/SAVPF 96', 'a=inactive', 'a=mid:2', '',
  ].join('\r\n');

  it('keeps open an m-line the offer kept open, and leaves one the offer rejected out of BUNDLE', () => {
    const lines = keepInactiveOpen(answer, scanOffer(offer)!.rejected).split('\r\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('m=') || l.startsWith('a=group')), [
      'a=group:BUNDLE 0 1', 'm=audio 9 UDP/TLS/RTP/SAVPF 111', 'm=video 9 UDP/TLS/RTP/SAVPF 96', 'm=video 0 UDP/TLS/RTP/SAVPF 96',
    ]);
  });

  it('keeps in BUNDLE an inactive m-line offered with port 0 and a=bundle-only (Firefox under max-bundle): it is not rejected', () => {
    // RFC 8829 5.2.1: a bundled m-line other than the BUNDLE tag may be offered with port 0 and a=bundle-only
    const bundleOnly = offer.replace('m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:1\r\na=recvonly', 'm=video 0 UDP/TLS/RTP/SAVPF 96\r\na=bundle-only\r\na=mid:1\r\na=inactive');
    const inactive = answer.replace('a=sendonly\r\na=mid:1', 'a=inactive\r\na=mid:1').replace('m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=inactive', 'm=video 0 UDP/TLS/RTP/SAVPF 96\r\na=inactive');
    const lines = keepInactiveOpen(inactive, scanOffer(bundleOnly)!.rejected).split('\r\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('m=') || l.startsWith('a=group')), [
      'a=group:BUNDLE 0 1', 'm=audio 9 UDP/TLS/RTP/SAVPF 111', 'm=video 9 UDP/TLS/RTP/SAVPF 96', 'm=video 0 UDP/TLS/RTP/SAVPF 96',
    ]);
  });

  it('names the m-lines an offer rejects: port 0 without a=bundle-only', () => {
    const bundleOnly = offer.replace('m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:1', 'm=video 0 UDP/TLS/RTP/SAVPF 96\r\na=bundle-only\r\na=mid:1');
    assert.deepEqual([...scanOffer(bundleOnly)!.rejected], ['2']);
    assert.deepEqual([...scanOffer(offer)!.rejected], ['2']);
  });

  it('changes nothing when every m-line is active', () => {
    const active = answer.replace('m=audio 0', 'm=audio 9').replace('a=group:BUNDLE 0 1 2', 'a=group:BUNDLE 0 1').replace(/\r\nm=video 0[^]*$/, '\r\n');
    assert.equal(keepInactiveOpen(active, scanOffer(offer)!.rejected), active);
  });
});
