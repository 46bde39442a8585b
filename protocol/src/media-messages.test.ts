import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseClientControl, parseJoin, parseServerControl } from './media-messages.ts';

const B32 = Buffer.alloc(32, 7).toString('base64url');
const NON_CANONICAL = `${B32.slice(0, 42)}B`;

describe('media messages', () => {
  it('parses a join with exactly its fields', () => {
    const join = parseJoin(JSON.stringify({ type: 'join', grant: 'a.b.c', nonce: B32, proof: B32 }));
    assert.equal(join?.grant, 'a.b.c');
    assert.equal(join?.nonce, B32);
  });

  const badJoins: [string, unknown][] = [
    ['not JSON', '{'],
    ['an array', []],
    ['another type', { type: 'publish', grant: 'g', nonce: B32, proof: B32 }],
    ['an extra field', { type: 'join', grant: 'g', nonce: B32, proof: B32, key: B32 }],
    ['a missing proof', { type: 'join', grant: 'g', nonce: B32 }],
    ['a short nonce', { type: 'join', grant: 'g', nonce: Buffer.alloc(16).toString('base64url'), proof: B32 }],
    ['padding in the nonce', { type: 'join', grant: 'g', nonce: `${Buffer.alloc(32).toString('base64')}`, proof: B32 }],
    ['a non-canonical nonce', { type: 'join', grant: 'g', nonce: NON_CANONICAL, proof: B32 }],
    ['an empty grant', { type: 'join', grant: '', nonce: B32, proof: B32 }],
    ['a grant over 8192 characters', { type: 'join', grant: 'g'.repeat(8193), nonce: B32, proof: B32 }],
    ['__proto__', JSON.parse(`{"type":"join","grant":"g","nonce":"${B32}","proof":"${B32}","__proto__":{}}`)],
  ];
  for (const [name, value] of badJoins) {
    it(`refuses a join with ${name}`, () => {
      assert.equal(parseJoin(typeof value === 'string' ? value : JSON.stringify(value)), undefined);
    });
  }

  it('parses an rtc_offer with its tracks', () => {
    const tracks = [{ mid: '0', stream_id: 1, direction: 'send' }, { mid: 'v1', stream_id: 1, direction: 'recv' }];
    assert.deepEqual(parseClientControl(JSON.stringify({ type: 'rtc_offer', id: 4, sdp: 'v=0', tracks })),
      { type: 'rtc_offer', id: 4, sdp: 'v=0', tracks });
    assert.deepEqual(parseClientControl(JSON.stringify({ type: 'rtc_offer', id: 4, sdp: 'v=0', tracks: [] }))?.type, 'rtc_offer');
  });

  it('takes new_connection on an rtc_offer, and leaves it out when false', () => {
    assert.deepEqual(parseClientControl(JSON.stringify({ type: 'rtc_offer', id: 4, sdp: 'v=0', tracks: [], new_connection: true })),
      { type: 'rtc_offer', id: 4, sdp: 'v=0', tracks: [], new_connection: true });
    assert.deepEqual(parseClientControl(JSON.stringify({ type: 'rtc_offer', id: 4, sdp: 'v=0', tracks: [], new_connection: false })),
      { type: 'rtc_offer', id: 4, sdp: 'v=0', tracks: [] });
  });

  const track = { mid: '0', stream_id: 1, direction: 'send' };
  const badOffers: [string, unknown][] = [
    ['no tracks', { type: 'rtc_offer', id: 1, sdp: 'v=0' }],
    ['an empty SDP', { type: 'rtc_offer', id: 1, sdp: '', tracks: [] }],
    ['an SDP over 60000 characters', { type: 'rtc_offer', id: 1, sdp: 'v'.repeat(60_001), tracks: [] }],
    ['41 tracks', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: Array.from({ length: 41 }, (_, i) => ({ ...track, mid: String(i), stream_id: i + 1 })) }],
    ['a mid twice', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [track, { ...track, stream_id: 2 }] }],
    ['a stream sent twice', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [track, { ...track, mid: '1' }] }],
    ['a mid with a space', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [{ ...track, mid: 'a b' }] }],
    ['a mid over 16 characters', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [{ ...track, mid: 'm'.repeat(17) }] }],
    ['stream id 0', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [{ ...track, stream_id: 0 }] }],
    ['another direction', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [{ ...track, direction: 'sendrecv' }] }],
    ['an extra track field', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [{ ...track, kind: 'video' }] }],
    ['a track that is not an object', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: ['0'] }],
    ['new_connection that is not a boolean', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [], new_connection: 1 }],
    ['another extra field', { type: 'rtc_offer', id: 1, sdp: 'v=0', tracks: [], restart: true }],
  ];
  for (const [name, value] of badOffers) {
    it(`refuses an rtc_offer with ${name}`, () => {
      assert.equal(parseClientControl(JSON.stringify(value)), undefined);
    });
  }

  it('parses an rtc_video with bounds or nulls', () => {
    assert.deepEqual(parseClientControl('{"type":"rtc_video","stream_id":7,"max_width":320,"max_height":180,"max_layer":null}'),
      { type: 'rtc_video', stream_id: 7, max_width: 320, max_height: 180, max_layer: null });
    assert.deepEqual(parseClientControl('{"type":"rtc_video","stream_id":7,"max_width":0,"max_height":0,"max_layer":0}')?.type, 'rtc_video');
  });

  const badVideo: [string, string][] = [
    ['a missing bound', '{"type":"rtc_video","stream_id":7,"max_width":320,"max_height":180}'],
    ['layer 3', '{"type":"rtc_video","stream_id":7,"max_width":null,"max_height":null,"max_layer":3}'],
    ['a negative width', '{"type":"rtc_video","stream_id":7,"max_width":-1,"max_height":null,"max_layer":null}'],
    ['a width over 16384', '{"type":"rtc_video","stream_id":7,"max_width":16385,"max_height":null,"max_layer":null}'],
    ['a fractional height', '{"type":"rtc_video","stream_id":7,"max_width":null,"max_height":1.5,"max_layer":null}'],
    ['stream id 0', '{"type":"rtc_video","stream_id":0,"max_width":null,"max_height":null,"max_layer":null}'],
    ['an id', '{"type":"rtc_video","id":1,"stream_id":7,"max_width":null,"max_height":null,"max_layer":null}'],
  ];
  for (const [name, text] of badVideo) {
    it(`refuses an rtc_video with ${name}`, () => {
      assert.equal(parseClientControl(text), undefined);
    });
  }

  it('parses every client control message', () => {
    assert.deepEqual(parseClientControl('{"type":"publish","id":1,"stream_id":9,"kind":"video"}'),
      { type: 'publish', id: 1, stream_id: 9, kind: 'video' });
    assert.deepEqual(parseClientControl('{"type":"publish","id":1,"stream_id":9,"kind":"video","source":"screen_share"}'),
      { type: 'publish', id: 1, stream_id: 9, kind: 'video', source: 'screen_share' });
    assert.deepEqual(parseClientControl('{"type":"unpublish","id":2,"stream_id":9}'), { type: 'unpublish', id: 2, stream_id: 9 });
    assert.deepEqual(parseClientControl('{"type":"ping","id":0}'), { type: 'ping', id: 0 });
    assert.deepEqual(parseClientControl('{"type":"leave"}'), { type: 'leave' });
    assert.equal(parseClientControl(JSON.stringify({ type: 'renew', id: 3, grant: 'g', nonce: B32, proof: B32 }))?.type, 'renew');
  });

  const badControls = [
    '{"type":"publish","id":1,"stream_id":0,"kind":"video"}',
    '{"type":"publish","id":1,"stream_id":4294967296,"kind":"video"}',
    '{"type":"publish","id":1,"stream_id":1,"kind":"screen"}',
    '{"type":"publish","id":-1,"stream_id":1,"kind":"audio"}',
    '{"type":"publish","id":1.5,"stream_id":1,"kind":"audio"}',
    '{"type":"publish","id":1,"stream_id":1,"kind":"audio","source":"speaker"}',
    '{"type":"publish","id":1,"stream_id":1,"kind":"audio","source":null}',
    '{"type":"ping"}',
    '{"type":"join","grant":"g","nonce":"x","proof":"y"}',
    '{"type":"leave","id":1}',
    '{"type":"hello","id":1}',
    'null',
  ];
  for (const text of badControls) {
    it(`refuses the control message ${text}`, () => assert.equal(parseClientControl(text), undefined));
  }

  it('parses server control messages and tells an unknown type from a malformed one', () => {
    assert.deepEqual(parseServerControl('{"type":"pong","id":4,"server_time_ms":17}'),
      { ok: true, message: { type: 'pong', id: 4, server_time_ms: 17 } });
    assert.deepEqual(parseServerControl('{"type":"stream_key","stream_id":2,"epoch":3}'), { ok: false, error: 'malformed' });
    assert.deepEqual(parseServerControl('{"type":"permissions","publish_streams":[],"subscribe_streams":[3],"subscribe_room":false}'),
      { ok: true, message: { type: 'permissions', publish_streams: [], subscribe_streams: [3], subscribe_room: false } });
    assert.deepEqual(parseServerControl('{"type":"permissions","publish_streams":[1],"subscribe_streams":[]}'), { ok: false, error: 'malformed' });
    assert.deepEqual(parseServerControl('{"type":"stream_muted","stream_id":2,"participant_id":"pa_1","muted":true}'),
      { ok: true, message: { type: 'stream_muted', stream_id: 2, participant_id: 'pa_1', muted: true } });
    assert.deepEqual(parseServerControl('{"type":"stream_muted","stream_id":2,"participant_id":"pa_1","muted":1}'), { ok: false, error: 'malformed' });
    assert.deepEqual(parseServerControl('{"type":"later_feature"}'), { ok: false, error: 'unknown_type' });
    assert.deepEqual(parseServerControl('[]'), { ok: false, error: 'malformed' });
  });
});
