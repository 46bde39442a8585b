import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCandidate } from './gathering.ts';

describe('parseCandidate', () => {
  it('reads the transport and the type of a candidate line, with or without a=', () => {
    assert.deepEqual(parseCandidate('candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host generation 0'), { protocol: 'udp', type: 'host' });
    assert.deepEqual(parseCandidate('a=candidate:2 1 TCP 1518280447 192.0.2.2 9 typ host tcptype active'), { protocol: 'tcp', type: 'host' });
    assert.deepEqual(parseCandidate('candidate:3 1 udp 41885439 198.51.100.7 60000 typ relay raddr 0.0.0.0 rport 0'), { protocol: 'udp', type: 'relay' });
    assert.equal(parseCandidate('candidate:4 1 udp'), undefined);
    assert.equal(parseCandidate(''), undefined);
  });
});
