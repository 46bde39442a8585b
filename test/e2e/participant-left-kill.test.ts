import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaSession as MediaSessionView, MediaSessionList } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { bearer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import type { RunningServer } from '../helpers/platform.ts';
import { freeTcpPort } from '../helpers/ports.ts';
import { join, sleep, TokenIssuer } from '../helpers/media-session.ts';
import { startMediaServer } from './media-server.ts';
import { useTempDirs } from './serve-helpers.ts';

/**
 * A media node killed (SIGKILL) with a session open, and started again on its address: a process
 * of its own, since the point is a node that ends without closing anything. The other reasons of
 * `participant.left` are server/src/sessions/participant-left.test.ts.
 */
describe('participant.left after a media node crash', () => {
  const tempDir = useTempDirs();
  let server: RunningServer;
  let issuer: TokenIssuer;
  let env: Record<string, string>;
  const opened: MediaSession[] = [];

  before(async () => {
    // one media port across restarts: the node is the same `host:port`, and clears what a crash left
    env = { RTC_MEDIA_PORT: String(await freeTcpPort()) };
    server = await startMediaServer({ dataDir: tempDir(), env });
    issuer = await TokenIssuer.create(() => server.api);
  });
  after(async () => {
    for (const s of opened) await s.close();
    await server?.stop();
  });

  it('ends, as node_lost at its last heartbeat, a session left open by a media node killed and started again on its address', async () => {
    const grant = await issuer.issue({ room_id: 'reasons-crash', user_id: 'jack', role: 'speaker', subscribe_room: true });
    const jack = await join(grant, { reconnect: false });
    opened.push(jack);
    const listed = async (): Promise<MediaSessionView | undefined> => {
      const res = await request(`${server.api}/v1/projects/${issuer.customer.projectId}/sessions?room_id=reasons-crash`, {
        headers: bearer(issuer.customer.accessToken),
      });
      assert.equal(res.status, 200, res.text);
      return res.json<MediaSessionList>().sessions.find((s) => s.participant_id === jack.participantId);
    };
    while ((await listed()) === undefined) await sleep(20);
    assert.equal((await listed())!.left_at, null);
    server.process.kill('SIGKILL');
    await server.stop();
    server = await startMediaServer({ dataDir: server.dataDir, env });
    const ended = (await listed())!;
    assert.equal(ended.reason, 'node_lost');
    assert.ok(ended.left_at !== null && ended.left_at >= ended.joined_at);
    assert.equal(ended.duration_seconds, ended.left_at - ended.joined_at);
  });
});
