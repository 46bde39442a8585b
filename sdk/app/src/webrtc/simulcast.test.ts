import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readVideoSdp, SimulcastAnswers } from './simulcast.ts';

const RID = 'a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id';
const sdp = (...sections: string[][]): string => ['v=0', 's=-', 't=0 0', ...sections.flat(), ''].join('\r\n');
const video = (mid: string, ...lines: string[]): string[] => ['m=video 9 UDP/TLS/RTP/SAVPF 96', `a=mid:${mid}`, ...lines];

describe('readVideoSdp', () => {
  const answer = sdp(
    ['m=audio 9 UDP/TLS/RTP/SAVPF 111', 'a=mid:0', RID],
    video('1', RID, 'a=rid:q recv', 'a=simulcast:recv q;h;f'),
    video('2', 'a=extmap:10/recvonly urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id'),
    video('3', 'a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id', 'a=simulcast:recv q;h'),
    ['m=video 0 UDP/TLS/RTP/SAVPF 96', 'a=mid:4', RID],
  );

  it('tells, per video m-line not rejected, whether it negotiates the RID extension and takes simulcast', () => {
    assert.deepEqual([...readVideoSdp(answer)], [
      ['1', { rid: true, simulcast: true }],
      ['2', { rid: true, simulcast: false }],
      // simulcast without the RID extension cannot tell layers apart: not taken
      ['3', { rid: false, simulcast: false }],
    ]);
    assert.equal(readVideoSdp('v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n').size, 0);
  });
});

describe('SimulcastAnswers', () => {
  it('asks first with an m-line without rids where the browser offers the RID extension on it (Chromium)', () => {
    const yes = new SimulcastAnswers(undefined);
    assert.deepEqual([yes.askable, yes.layers], [true, false], 'nothing told: one layer, after asking');
    yes.learn(sdp(video('0', RID, 'a=sendonly')), sdp(video('0', RID, 'a=recvonly')), ['0']);
    assert.deepEqual([yes.capable, yes.askable, yes.layers], [true, false, true]);

    const no = new SimulcastAnswers(undefined);
    no.learn(sdp(video('0', RID, 'a=sendonly')), sdp(video('0', 'a=recvonly')), ['0']);
    assert.deepEqual([no.capable, no.askable, no.layers], [false, false, false]);
  });

  it('lets the layers ask where the browser offers the RID extension only on an m-line with rids (Firefox)', () => {
    const answers = new SimulcastAnswers(undefined);
    // the question, offered without the extension: the answer cannot have it, and says nothing
    answers.learn(sdp(video('0', 'a=sendonly')), sdp(video('0', 'a=recvonly')), ['0']);
    assert.deepEqual([answers.capable, answers.askable, answers.layers], [undefined, false, undefined]);
    // the camera's layers ask: a server that takes them says yes ...
    const offer = sdp(video('0', 'a=sendonly'), video('1', RID, 'a=sendonly', 'a=rid:h send', 'a=rid:f send', 'a=simulcast:send h;f'));
    const taken = new SimulcastAnswers(undefined);
    taken.learn(sdp(video('0', 'a=sendonly')), sdp(video('0', 'a=recvonly')), ['0']);
    taken.learn(offer, sdp(video('0', 'a=recvonly'), video('1', RID, 'a=recvonly', 'a=rid:h recv', 'a=rid:f recv', 'a=simulcast:recv h;f')), ['0', '1']);
    assert.deepEqual([taken.capable, taken.layers], [true, true]);
    // ... and one without the extension says no
    answers.learn(offer, sdp(video('0', 'a=recvonly'), video('1', 'a=recvonly')), ['0', '1']);
    assert.deepEqual([answers.capable, answers.layers], [false, false]);
  });

  it('starts from what an earlier peer connection learned', () => {
    assert.deepEqual([new SimulcastAnswers(true).layers, new SimulcastAnswers(true).askable], [true, false]);
    assert.deepEqual([new SimulcastAnswers(false).layers, new SimulcastAnswers(false).askable], [false, false]);
  });
});
