/** `rtc rooms` run in this process (runRtc) against the room service API of a running platform with live media sessions. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaSession } from '../../../../sdk/app/src/index.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { join, nextEvent, TokenIssuer } from '../../../../test/helpers/media-session.ts';
import { runRtcInProcess } from '../../../../test/helpers/rtc-inproc.ts';

interface RoomJson {
  room_id: string;
  media_node: string;
  participants: { participant_id: string; user_id: string; role: string }[];
}

describe('rtc rooms against live media sessions', () => {
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  let env: Record<string, string>;
  const sessions: MediaSession[] = [];

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'media'], env: { RTC_MEDIA_PUBLIC_HOST: '127.0.0.1' } });
    issuer = await TokenIssuer.create(() => server.api);
    env = { RTC_APP_ID: issuer.customer.appId, RTC_APP_SECRET: issuer.customer.appSecret };
  });
  after(async () => {
    for (const s of sessions) await s.close();
    await server.stop();
  });

  const rtc = (...args: string[]): ReturnType<typeof runRtcInProcess> => runRtcInProcess([...args, '--url', server.token], env);

  it('lists and shows the live rooms, removes a participant and ends a room', async () => {
    const empty = await rtc('rooms', 'list');
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /^no live rooms$/m);

    const alice = await join(await issuer.issue({ room_id: 'cli-room', user_id: 'alice', role: 'speaker', publish_streams: [1] }));
    const bob = await join(await issuer.issue({ room_id: 'cli-room', user_id: 'bob', role: 'audience', subscribe_room: true }));
    const carol = await join(await issuer.issue({ room_id: 'other-room', user_id: 'carol', role: 'speaker' }));
    sessions.push(alice, bob, carol);

    const listed = await rtc('rooms', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const rooms = (JSON.parse(listed.stdout) as { rooms: RoomJson[] }).rooms;
    assert.deepEqual(rooms.map((r) => [r.room_id, r.participants.length]).sort(), [['cli-room', 2], ['other-room', 1]]);
    const human = await rtc('rooms', 'list');
    assert.match(human.stdout, /^cli-room {2}2 participants {2}media=127\.0\.0\.1:\d+ {2}started=/m);

    const shown = await rtc('rooms', 'show', 'cli-room', '--json');
    assert.equal(shown.code, 0, shown.stderr);
    const room = JSON.parse(shown.stdout) as RoomJson;
    const bobId = room.participants.find((p) => p.user_id === 'bob')!.participant_id;

    const bobClosed = nextEvent(bob, 'disconnected', 5000);
    const removed = await rtc('rooms', 'remove', 'cli-room', bobId, '--ban', '120');
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /^removed$/m);
    assert.match(removed.stdout, /^bob: banned from the room until \d{4}-\d\d-\d\dT/m);
    const tooLong = await rtc('rooms', 'remove', 'cli-room', bobId, '--ban', '604801');
    assert.equal(tooLong.code, 2, tooLong.stderr);
    assert.match(tooLong.stderr, /--ban takes 1 to 604800 seconds/);
    assert.equal((await bobClosed).code, 4003);
    assert.equal(alice.state, 'connected', 'the others stay');

    const aliceClosed = nextEvent(alice, 'disconnected', 5000);
    const ended = await rtc('rooms', 'end', 'cli-room');
    assert.equal(ended.code, 0, ended.stderr);
    assert.match(ended.stdout, /^ended \(1 participants disconnected\)$/m);
    assert.equal((await aliceClosed).code, 4003);
    assert.equal(carol.state, 'connected', 'another room is untouched');

    const gone = await rtc('rooms', 'show', 'cli-room');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /not_found/);
  });

  it('shows what a participant publishes, mutes and unmutes one stream, and changes permissions', async () => {
    const dora = await join(await issuer.issue({ room_id: 'cli-mute', user_id: 'dora', role: 'speaker', publish_streams: [1, 2] }));
    const eve = await join(await issuer.issue({ room_id: 'cli-mute', user_id: 'eve', role: 'speaker', subscribe_room: true }));
    sessions.push(dora, eve);
    await dora.publish(1, 'audio', { source: 'microphone' });
    let shown = '';
    for (let at = Date.now(); !/stream 1 {2}audio {2}source=microphone$/m.test(shown); shown = (await rtc('rooms', 'show', 'cli-mute')).stdout) {
      assert.ok(Date.now() - at < 10_000, `the stream is never shown: ${shown}`);
    }

    const told = nextEvent(eve, 'streamMuted');
    const muted = await rtc('rooms', 'mute', 'cli-mute', dora.participantId, '1');
    assert.equal(muted.code, 0, muted.stderr);
    assert.match(muted.stdout, /^stream 1 muted$/m);
    assert.match(muted.stdout, /^ {4}stream 1 {2}audio {2}source=microphone {2}muted$/m);
    assert.deepEqual(await told, { streamId: 1, participantId: dora.participantId, muted: true });
    const unmuted = await rtc('rooms', 'mute', 'cli-mute', dora.participantId, '1', '--unmute', '--json');
    assert.equal(unmuted.code, 0, unmuted.stderr);
    assert.equal((JSON.parse(unmuted.stdout) as { streams: { muted: boolean }[] }).streams[0]!.muted, false);
    const unknown = await rtc('rooms', 'mute', 'cli-mute', dora.participantId, '2');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not_found/);
    const badStream = await rtc('rooms', 'mute', 'cli-mute', dora.participantId, 'one');
    assert.equal(badStream.code, 2);

    const permissions = nextEvent(eve, 'permissions');
    const changed = await rtc('rooms', 'permissions', 'cli-mute', eve.participantId, '--subscribe', '1');
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, /^permissions changed$/m);
    assert.match(changed.stdout, /user=eve .* subscribe=1$/m);
    assert.deepEqual(await permissions, { publishStreams: [], subscribeStreams: [1], subscribeRoom: false });
    const back = await rtc('rooms', 'permissions', 'cli-mute', eve.participantId, '--subscribe-room', '--publish', '', '--json');
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(JSON.parse(back.stdout), { ...(JSON.parse(back.stdout) as object), publish_streams: [], subscribe_room: true });
    for (const args of [[], ['--subscribe', '1', '--subscribe-room'], ['--publish', 'x']]) {
      const refused = await rtc('rooms', 'permissions', 'cli-mute', eve.participantId, ...args);
      assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
    }
  });

  it('refuses a wrong App Secret in the API\'s words', async () => {
    const res = await runRtcInProcess(['rooms', 'list', '--url', server.token], { RTC_APP_ID: issuer.customer.appId, RTC_APP_SECRET: `sk_${'A'.repeat(43)}` });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /invalid_credentials/);
  });
});
