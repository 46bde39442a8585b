import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeSignalingEventData, parseSignalingEvent } from './signaling-events.ts';

describe('signaling events', () => {
  it('reads back what the server encodes, with the SSE event as type and the id of logged events', () => {
    const data = encodeSignalingEventData('join', { user_id: 'u1', role: 'speaker', at_ms: 5 });
    assert.deepEqual(parseSignalingEvent({ event: 'join', id: 'e.1', data }), { type: 'join', id: 'e.1', user_id: 'u1', role: 'speaker', at_ms: 5 });
    const ready = encodeSignalingEventData('ready', { room_id: 'r', replayed: 0, at_ms: 6 });
    assert.deepEqual(parseSignalingEvent({ event: 'ready', id: undefined, data: ready }), { type: 'ready', room_id: 'r', replayed: 0, at_ms: 6 });
  });

  it('refuses unknown events, data that is not an object, and a logged event without an id', () => {
    assert.equal(parseSignalingEvent({ event: 'later', id: 'e.1', data: '{}' }), undefined);
    assert.equal(parseSignalingEvent({ event: 'join', id: 'e.1', data: '[1]' }), undefined);
    assert.equal(parseSignalingEvent({ event: 'message', id: undefined, data: '{"from":"u"}' }), undefined);
  });
});
