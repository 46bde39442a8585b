import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaSession as MediaSessionView, MediaSessionList, ParticipantLeftReason, ProjectUsage, TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../../sdk/app/src/index.ts';
import type { WebhookEvent } from '../../../sdk/server/src/index.ts';
import { bearer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import type { ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { freeTcpPort } from '../../../test/helpers/ports.ts';
import { makeCertificate } from '../../../test/helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.ts';
import { join, nextEvent, sleep, TcpProxy, TokenIssuer } from '../../../test/helpers/media-session.ts';
import { serveMedia } from '../../../test/helpers/media-platform.ts';
import { useTempDirs } from '../../../test/helpers/grant-checks.ts';

type Left = Extract<WebhookEvent, { type: 'participant.left' }>;

/**
 * The platform (api, token, media), served in this process, delivering participant and room events
 * to a real HTTPS receiver: each reason of `participant.left` produced by its real cause, the
 * participant counts of the room events, and the session history and participant minutes read back
 * after a restart on the same SQLite file (docs/reference/webhooks.md, docs/reference/api.md
 * "Session history"). A media node killed is test/e2e/participant-left-kill.test.ts.
 */
describe('participant.left reasons, participant counts and the session history', () => {
  const tempDir = useTempDirs();
  let receiver: WebhookReceiver;
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  let env: Record<string, string>;
  /** Every session a test opened, closed after the block (closing twice does nothing). */
  const opened: MediaSession[] = [];
  /** Why each participant left, as the history must say it too. */
  const expected = new Map<string, ParticipantLeftReason>();
  let idle: { session: MediaSession; participantId: string } | undefined;

  const token = (user: string, room: string, body: Record<string, unknown> = {}): Promise<TokenResponse> =>
    issuer.issue({ room_id: room, user_id: user, role: 'speaker', subscribe_room: true, ...body });
  const enter = async (grant: TokenResponse, options: Parameters<typeof join>[1] = {}): Promise<MediaSession> => {
    const session = await join(grant, { reconnect: false, ...options });
    opened.push(session);
    return session;
  };
  const events = (): WebhookEvent[] => receiver.deliveries.map((d) => d.event);
  const leftOf = async (participantId: string, timeoutMs = 10_000): Promise<Left> => {
    const find = (list: readonly WebhookEvent[]): Left | undefined =>
      list.find((e): e is Left => e.type === 'participant.left' && e.data.participant_id === participantId);
    await receiver.waitFor((list) => find(list) !== undefined, `participant.left of ${participantId}`, timeoutMs);
    return find(events())!;
  };
  const expectLeft = async (participantId: string, reason: ParticipantLeftReason, timeoutMs?: number): Promise<Left> => {
    expected.set(participantId, reason);
    const left = await leftOf(participantId, timeoutMs);
    assert.equal(left.data.reason, reason);
    return left;
  };
  const rooms = (path: string): Promise<{ status: number; text: string }> =>
    request(`${server.api}/v1/rtc/rooms${path}`, { method: 'POST', headers: { authorization: issuer.customer.auth } });
  const consoleGet = async <T>(path: string): Promise<T> => {
    const res = await request(`${server.api}/v1/projects/${issuer.customer.projectId}${path}`, { headers: bearer(issuer.customer.accessToken) });
    assert.equal(res.status, 200, res.text);
    return res.json<T>();
  };

  before(async () => {
    const tls = makeCertificate(tempDir());
    receiver = await startWebhookReceiver(tls);
    // one media port across restarts: the node is the same `host:port`, and clears what a crash left
    env = {
      RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile, RTC_WEBHOOK_RETRY_BASE_MS: '100',
      RTC_MEDIA_PORT: String(await freeTcpPort()),
    };
    server = await serveMedia({ dataDir: tempDir(), env });
    issuer = await TokenIssuer.create(() => server.api);
    const created = await request(`${server.api}/v1/projects/${issuer.customer.projectId}/webhooks`, {
      headers: bearer(issuer.customer.accessToken), body: { url: receiver.url },
    });
    assert.equal(created.status, 201, created.text);
    receiver.secrets = [created.json<{ secret: string }>().secret];
  });
  after(async () => {
    for (const s of opened) await s.close();
    await server?.stop();
    await receiver?.stop();
  });

  it('starts a session that sends nothing: the server closes it after 45 s of silence (checked last)', async () => {
    // no keepalive: the client neither pings nor gives up, so only the server's idle timeout ends it
    const session = await enter(await token('idle', 'reasons-idle'), { keepaliveIntervalMs: 600_000, keepaliveTimeoutMs: 600_000 });
    idle = { session, participantId: session.participantId };
  });

  it('counts the participants of the room in room.started, participant.joined, participant.left and room.finished', async () => {
    const room = 'counts';
    const alice = await enter(await token('alice', room));
    const bob = await enter(await token('bob', room));
    type Joined = Extract<WebhookEvent, { type: 'participant.joined' }>;
    const joined = (id: string) => events().find((e): e is Joined => e.type === 'participant.joined' && e.data.participant_id === id);
    await receiver.waitFor(() => joined(alice.participantId) !== undefined && joined(bob.participantId) !== undefined, 'both joins');
    assert.equal(joined(alice.participantId)!.data.num_participants, 1);
    assert.equal(joined(bob.participantId)!.data.num_participants, 2);
    await alice.close();
    assert.equal((await expectLeft(alice.participantId, 'left')).data.num_participants, 1);
    await bob.close();
    assert.equal((await expectLeft(bob.participantId, 'left')).data.num_participants, 0);
    type RoomEvent = Extract<WebhookEvent, { type: 'room.started' | 'room.finished' }>;
    const ofRoom = (type: RoomEvent['type']) => events().filter((e): e is RoomEvent => e.type === type && e.data.room_id === room);
    await receiver.waitFor(() => ofRoom('room.finished').length === 1, 'room.finished');
    assert.deepEqual(ofRoom('room.started').map((e) => e.data.num_participants), [1]);
    assert.deepEqual(ofRoom('room.finished').map((e) => e.data.num_participants), [0]);
  });

  it('says removed for a room API removal and room_ended for the end of the room, both closing with 4003', async () => {
    const room = 'reasons-room-api';
    const carol = await enter(await token('carol', room));
    const dave = await enter(await token('dave', room));
    const erin = await enter(await token('erin', room));
    // the room API lists participants once their media node recorded them
    for (;; await sleep(20)) {
      const res = await request(`${server.api}/v1/rtc/rooms/${room}`, { headers: { authorization: issuer.customer.auth } });
      if (res.status === 200 && res.json<{ participants: unknown[] }>().participants.length === 3) break;
    }
    const carolClosed = nextEvent(carol, 'disconnected');
    assert.equal((await rooms(`/${room}/participants/${carol.participantId}/remove`)).status, 200);
    assert.equal((await carolClosed).code, 4003);
    assert.equal((await expectLeft(carol.participantId, 'removed')).data.num_participants, 2);
    const daveClosed = nextEvent(dave, 'disconnected');
    assert.equal((await rooms(`/${room}/end`)).status, 200);
    assert.equal((await daveClosed).code, 4003);
    await expectLeft(dave.participantId, 'room_ended');
    await expectLeft(erin.participantId, 'room_ended');
  });

  it('says revoked for a revoked token, expired for a grant not renewed, replaced for a newer session of the same user', async () => {
    const grant = await token('frank', 'reasons-grants');
    const frank = await enter(grant);
    await issuer.revoke(grant);
    await expectLeft(frank.participantId, 'revoked');

    const gina = await enter(await token('gina', 'reasons-grants', { ttl_seconds: 2 }));
    await nextEvent(gina, 'expired', 5000);
    await expectLeft(gina.participantId, 'expired');

    const first = await enter(await token('hank', 'reasons-grants'));
    const second = await enter(await token('hank', 'reasons-grants'));
    const left = await expectLeft(first.participantId, 'replaced');
    assert.equal(left.data.num_participants, 0, 'the earlier session leaves before the newer one joins');
    await second.close();
    await expectLeft(second.participantId, 'left');
  });

  it('says disconnected when the connection is lost without a close', async () => {
    const proxy = await TcpProxy.start(server.urls['media']!);
    try {
      const ivy = await enter(await token('ivy', 'reasons-network'), { url: proxy.url });
      proxy.cut();
      await expectLeft(ivy.participantId, 'disconnected');
    } finally {
      await proxy.close();
    }
  });

  it('says timeout for the session that sent nothing for 45 s', async () => {
    assert.ok(idle);
    // idle sweeps every 5 s: closed between 45 and 50 s after its last message, counted from the block's start
    await expectLeft(idle.participantId, 'timeout', 90_000);
    // a leave arrives with the close; the client's own timers are off, so it may still think it is open
    await idle.session.close();
  });

  it('lists every session after a restart on the same data, newest first, with its reason and duration, and adds up the minutes', async () => {
    const { dataDir } = server;
    await server.stop();
    server = await serveMedia({ dataDir, env });
    const sessions: MediaSessionView[] = [];
    let cursor: string | null = null;
    do {
      const page: MediaSessionList = await consoleGet<MediaSessionList>(`/sessions?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      sessions.push(...page.sessions);
      cursor = page.next_cursor;
    } while (cursor !== null);
    const byId = new Map(sessions.map((s) => [s.participant_id, s]));
    for (const [participantId, reason] of expected) {
      const s = byId.get(participantId);
      assert.ok(s, `session ${participantId} listed`);
      assert.equal(s.reason, reason, participantId);
      assert.ok(s.left_at !== null && s.left_at >= s.joined_at);
      assert.equal(s.duration_seconds, s.left_at - s.joined_at);
      assert.match(s.media_node ?? '', /:\d+$/);
    }
    assert.equal(sessions.length, expected.size, 'only this project\'s sessions, each once');
    const joinedAt = sessions.map((s) => s.joined_at);
    assert.deepEqual(joinedAt, [...joinedAt].sort((a, b) => b - a), 'newest first');
    // the grant that expired lived two seconds at least
    const expired = sessions.find((s) => s.reason === 'expired')!;
    assert.ok(expired.duration_seconds >= 1, `expired after ${expired.duration_seconds} s`);
    assert.ok(byId.get(idle!.participantId)!.duration_seconds >= 45);

    const ofRoom = await consoleGet<MediaSessionList>('/sessions?room_id=reasons-room-api');
    assert.deepEqual(ofRoom.sessions.map((s) => s.user_id).sort(), ['carol', 'dave', 'erin']);

    const usage = await consoleGet<ProjectUsage>('/usage');
    assert.equal(usage.participant_minutes_per_day.length, usage.tokens_per_day.length);
    const seconds = usage.participant_minutes_per_day.reduce((sum, d) => sum + d.participant_seconds, 0);
    assert.equal(seconds, sessions.reduce((sum, s) => sum + s.duration_seconds, 0));
    for (const d of usage.participant_minutes_per_day) assert.equal(d.participant_minutes, Math.ceil(d.participant_seconds / 60));
  });
});
