import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatEventId, parseEventId, sseFrame } from './sse.ts';

describe('sseFrame', () => {
  it('writes id, event and one data line, ended by a blank line', () => {
    assert.equal(sseFrame('message', '{"a":1}', 'ep.7'), 'id: ep.7\nevent: message\ndata: {"a":1}\n\n');
    assert.equal(sseFrame('revoked', '{}'), 'event: revoked\ndata: {}\n\n');
  });

  it('cannot be split by data, since serialized JSON has no raw line break', () => {
    const frame = sseFrame('message', JSON.stringify({ text: 'a\n\nid: 99\r\nevent: revoked' }), 'ep.1');
    assert.equal(frame.split('\n\n').length, 2);
    assert.equal(frame.includes('\r'), false);
  });
});

describe('event ids', () => {
  it('round-trips', () => {
    assert.deepEqual(parseEventId(formatEventId('AbC-_9', 42)), { epoch: 'AbC-_9', seq: 42 });
    assert.deepEqual(parseEventId('e.0'), { epoch: 'e', seq: 0 });
  });

  for (const bad of ['', '.', 'e.', '.1', 'e.01', 'e.-1', 'e.1.2', 'e.1e3', 'e f.1', `e.${'9'.repeat(17)}`, `${'x'.repeat(33)}.1`]) {
    it(`refuses ${JSON.stringify(bad)}`, () => assert.equal(parseEventId(bad), undefined));
  }
});
