import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCandidate, readVideoAnswer } from './peer.ts';

describe('parseCandidate', () => {
  it('reads the transport and the type of a candidate line, with or without a=', () => {
    assert.deepEqual(parseCandidate('candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host generation 0'), { protocol: 'udp', type: 'host' });
    assert.deepEqual(parseCandidate('a=candidate:2 1 TCP 1518280447 192.0.2.2 9 typ host tcptype active'), { protocol: 'tcp', type: 'host' });
    assert.deepEqual(parseCandidate('candidate:3 1 udp 41885439 198.51.100.7 60000 typ relay raddr 0.0.0.0 rport 0'), { protocol: 'udp', type: 'relay' });
    assert.equal(parseCandidate('candidate:4 1 udp'), undefined);
    assert.equal(parseCandidate(''), undefined);
  });
});

describe('readVideoAnswer', () => {
  const answer = [
    'v=0', 's=-', 't=0 0',
    'm=audio 9 UDP/TLS/RTP/SAVPF 111', 'a=mid:0', 'a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id',
    'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=mid:1', 'a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id', 'a=rid:q recv', 'a=simulcast:recv q;h;f',
    'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=mid:2', 'a=extmap:10/recvonly urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id',
    'm=video 9 UDP/TLS/RTP/SAVPF 96', 'a=mid:3', 'a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id', 'a=simulcast:recv q;h',
    'm=video 0 UDP/TLS/RTP/SAVPF 96', 'a=mid:4', 'a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id',
    '',
  ].join('\r\n');

  it('tells, per video m-line not rejected, whether it negotiates the RID extension and takes simulcast', () => {
    assert.deepEqual([...readVideoAnswer(answer).m], [
      ['1', { rid: true, simulcast: true }],
      ['2', { rid: true, simulcast: false }],
      // simulcast without the RID extension cannot tell layers apart: not taken
      ['3', { rid: false, simulcast: false }],
    ]);
    assert.equal(readVideoAnswer('v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n').m.size, 0);
  });
});
