import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { join as joinPath } from 'node:path';
import type { ParticipantRemoved, RoomEnded, TokenResponse } from '@rtc/protocol';
import pino from 'pino';
import { loadConfig } from '../config.ts';
import { startMediaRole } from '../media/node/role.ts';
import { startSignaling } from '../signaling/role.ts';
import type { RoleServer } from '../role.ts';
import { MediaError, type MediaSession } from '../../../sdk/app/src/index.ts';
import { TokenClient } from '../../../sdk/server/src/index.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { join, nextEvent, sleep } from '../../../test/e2e/media-helpers.ts';

type Token = TokenResponse & { signaling: { token: string; url: string } };

// The room service API's removals, bans and ended rooms, through HTTP, the media WebSocket,
// signaling HTTP and the server SDK: the api and token apps in this process with the media and
// signaling roles beside them, on one SQLite store and one clock the test moves
// (docs/reference/room-api.md, "What a removal stores").
describe('room API removals and bans (SQLite, in process, injected clock)', () => {
  let server: InProcessPlatform;
  let media: RoleServer;
  let signaling: RoleServer;
  let customer: Customer;
  const sessions: MediaSession[] = [];
  const logger = pino({ level: 'silent' });

  const startRoles = async (): Promise<void> => {
    const env = { RTC_DATA_DIR: server.dataDir, RTC_HOST: '127.0.0.1' };
    media = await startMediaRole({ config: loadConfig({ ...env, RTC_ROLES: 'media', RTC_MEDIA_PORT: '0' }), deps: server.deps, logger });
    signaling = await startSignaling({ config: loadConfig({ ...env, RTC_ROLES: 'signaling', RTC_SIGNALING_PORT: '0' }), deps: server.deps, logger });
  };

  before(async () => {
    server = await startInProcess({ env: { RTC_SIGNALING_PUBLIC_URL: 'http://127.0.0.1:9' } });
    customer = await createCustomer(server);
    await startRoles();
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await media?.close();
    await signaling?.close();
    await server?.close();
  });

  const nowSec = (): number => Math.floor(server.clock.nowMs() / 1000);
  const issue = async (room: string, user: string): Promise<Token> => {
    const res = await server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'speaker', signaling: true },
    });
    assert.equal(res.status, 200, res.text);
    return res.json<Token>();
  };
  const enter = async (token: TokenResponse): Promise<MediaSession> => {
    const port = Number(new URL(media.url).port);
    const session = await join({ ...token, media: { ...token.media, sfu_host: '127.0.0.1', sfu_port: port } });
    sessions.push(session);
    return session;
  };
  /** The close code of a media join refused by the server. */
  const refusedCode = async (token: TokenResponse): Promise<number | undefined> => {
    const err = await enter(token).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof MediaError, `expected a refused join, got ${String(err)}`);
    return err.closeCode;
  };
  const signal = (path: string, token: string, body?: unknown) => request(`${signaling.url}/v1/signaling/${path}`, body === undefined
    ? { method: 'GET', headers: { authorization: `Bearer ${token}` } }
    : { body });
  const signalingJoin = async (token: Token): Promise<number> => (await signal('join', '', { token: token.signaling.token })).status;
  const signalingUsers = async (token: Token): Promise<string[]> => {
    const res = await signal('participants', token.signaling.token);
    assert.equal(res.status, 200, res.text);
    return res.json<{ participants: { user_id: string }[] }>().participants.map((p) => p.user_id);
  };
  const rooms = (method: string, path: string, body?: unknown) => server.request(`${server.api}/v1/rtc/rooms${path}`, {
    method, headers: { authorization: customer.auth }, ...(body !== undefined && { body }),
  });
  const participantOf = async (room: string, user: string): Promise<string> => {
    for (let i = 0; ; i++) {
      const res = await rooms('GET', `/${room}`);
      const found = res.status === 200 ? res.json<{ participants: { participant_id: string; user_id: string }[] }>().participants
        .find((p) => p.user_id === user) : undefined;
      if (found) return found.participant_id;
      assert.ok(i < 250, `${user} listed in ${room} within 5 s`);
      await sleep(20);
    }
  };
  const untilTrue = async (check: () => Promise<boolean>, what: string): Promise<void> => {
    for (let i = 0; !(await check()); i++) {
      assert.ok(i < 250, `${what} within 5 s`);
      await sleep(20);
    }
  };

  it('refuses after a removal the user\'s grant issued before it and never used, at media join and signaling; a later one is accepted', async () => {
    const alice = await issue('removal-1', 'alice');
    const carol = await issue('removal-1', 'carol');
    const carolRenewal = await issue('removal-1', 'carol');
    const carolElsewhere = await issue('removal-other', 'carol');
    const aliceSession = await enter(alice);
    const carolSession = await enter(carol);
    assert.equal(await signalingJoin(alice), 200);
    assert.equal(await signalingJoin(carol), 200);
    assert.deepEqual((await signalingUsers(alice)).sort(), ['alice', 'carol']);
    const participantId = await participantOf('removal-1', 'carol');

    const disconnected = nextEvent(carolSession, 'disconnected');
    const res = await rooms('POST', `/removal-1/participants/${participantId}/remove`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<ParticipantRemoved>(), { removed: true, user_id: 'carol', cut_off_at: nowSec() });
    assert.equal((await disconnected).code, 4003);
    await untilTrue(async () => !(await signalingUsers(alice)).includes('carol'), 'carol\'s signaling session closed');
    assert.equal(aliceSession.state, 'connected');

    assert.equal(await refusedCode(carolRenewal), 4003, 'the renewal grant, never seen by presence, is refused at join');
    assert.equal(await signalingJoin(carolRenewal), 401);
    assert.equal(await signalingJoin(carol), 401);
    // another room of the same user is untouched
    await enter(carolElsewhere);
    assert.equal(await signalingJoin(carolElsewhere), 200);

    server.clock.advance(1000);
    const back = await issue('removal-1', 'carol');
    await enter(back);
    assert.equal(await signalingJoin(back), 200);
  });

  it('validates ban_seconds with the documented rules', async () => {
    const frank = await issue('ban-2', 'frank');
    await enter(frank);
    const id = await participantOf('ban-2', 'frank');
    for (const [body, message] of [
      [{ ban_seconds: 604_801 }, 'ban_seconds must be at most 604800 (seven days)'],
      [{ ban_seconds: 1.5 }, 'ban_seconds must be an integer from 1 to 604800'],
      [{ ban_seconds: 0 }, 'ban_seconds must be an integer from 1 to 604800'],
      [{ ban: 1 }, 'unknown field "ban" is not allowed'],
    ] as const) {
      const res = await rooms('POST', `/ban-2/participants/${id}/remove`, body);
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { error: 'invalid_request', message });
    }
    assert.equal(await server.deps.store.roomCutoff(customer.projectId, 'ban-2', 'frank'), undefined);
    const res = await rooms('POST', `/ban-2/participants/${id}/remove`, { ban_seconds: 604_800 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json<ParticipantRemoved>().banned_until, nowSec() + 604_800);
  });

  it('ends a room: every earlier grant for it is refused, other rooms are untouched, a later grant opens it again', async () => {
    const gina = await enter(await issue('end-1', 'gina'));
    const hank = await enter(await issue('end-1', 'hank'));
    const neverJoined = await issue('end-1', 'ivan');
    const elsewhere = await issue('end-2', 'gina');
    const kept = await enter(await issue('end-2', 'judy'));
    await participantOf('end-1', 'gina');
    await participantOf('end-1', 'hank');
    const closed = [nextEvent(gina, 'disconnected'), nextEvent(hank, 'disconnected')];
    const res = await rooms('POST', '/end-1/end');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<RoomEnded>(), { ended: true, participants: 2, cut_off_at: nowSec() });
    assert.deepEqual((await Promise.all(closed)).map((d) => d.code), [4003, 4003]);
    assert.equal(await refusedCode(neverJoined), 4003);
    assert.equal(await signalingJoin(neverJoined), 401);
    await enter(elsewhere);
    assert.equal(await signalingJoin(elsewhere), 200);
    assert.equal(kept.state, 'connected');
    server.clock.advance(1000);
    await enter(await issue('end-1', 'ivan'));
  });

  it('keeps refusing after the media and signaling roles restart (read from the store)', async () => {
    await enter(await issue('restart-1', 'kim'));
    const early = await issue('restart-1', 'kim');
    const id = await participantOf('restart-1', 'kim');
    assert.equal((await rooms('POST', `/restart-1/participants/${id}/remove`)).status, 200);
    await media.close();
    await signaling.close();
    await startRoles();
    assert.equal(await refusedCode(early), 4003);
    assert.equal(await signalingJoin(early), 401);
    server.clock.advance(1000);
    await enter(await issue('restart-1', 'kim'));
  });

  it('answers 503 unavailable and stores nothing when the cut-off cannot be written; the retry succeeds', async () => {
    const leo = await enter(await issue('locked-1', 'leo'));
    const id = await participantOf('locked-1', 'leo');
    // another connection holds the file's write lock: the store cannot take the cut-off
    const locker = new Database(joinPath(server.dataDir, 'rtc.sqlite'));
    locker.exec('BEGIN IMMEDIATE');
    let res;
    try {
      res = await rooms('POST', `/locked-1/participants/${id}/remove`, { ban_seconds: 60 });
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    assert.equal(res.status, 503, res.text);
    assert.equal(res.json<{ error: string }>().error, 'unavailable');
    assert.equal(await server.deps.store.roomCutoff(customer.projectId, 'locked-1', 'leo'), undefined);
    assert.equal(leo.state, 'connected');
    const disconnected = nextEvent(leo, 'disconnected');
    const retry = await rooms('POST', `/locked-1/participants/${id}/remove`, { ban_seconds: 60 });
    assert.equal(retry.status, 200, retry.text);
    assert.equal((await disconnected).code, 4003);
  });


  // last: it moves the clock ten minutes, past the staleness bound of the media node's presence
  it('bans with ban_seconds: tokens issued until the ban ends are refused, those issued after are accepted (server SDK)', async () => {
    const dave = await issue('ban-1', 'dave');
    await enter(dave);
    const sdk = new TokenClient({ baseUrl: await server.listen('api'), appId: customer.appId, appSecret: customer.appSecret });
    await assert.rejects(sdk.removeParticipant('ban-1', 'pa_x', { banSeconds: 0 }), TypeError);
    const removedAt = nowSec();
    const removed = await sdk.removeParticipant('ban-1', await participantOf('ban-1', 'dave'), { banSeconds: 600 });
    assert.deepEqual(removed, { removed: true, user_id: 'dave', cut_off_at: removedAt + 600, banned_until: removedAt + 600 });
    assert.equal(await server.deps.store.roomCutoff(customer.projectId, 'ban-1', 'dave'), removedAt + 600);

    server.clock.advance(1000);
    const during = await issue('ban-1', 'dave');
    assert.equal(await refusedCode(during), 4003);
    assert.equal(await signalingJoin(during), 401);
    const other = await issue('ban-1', 'erin');
    await enter(other);

    server.clock.advance(599_000);
    assert.equal(nowSec(), removedAt + 600);
    assert.equal(await refusedCode(await issue('ban-1', 'dave')), 4003, 'issued in the ban\'s last second');
    server.clock.advance(1000);
    const afterBan = await issue('ban-1', 'dave');
    await enter(afterBan);
    assert.equal(await signalingJoin(afterBan), 200);
  });
});
