import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import type { SignalingClient } from '../../sdk/app/src/signaling.ts';
import { bearer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { joinRoom } from '../helpers/signaling.ts';
import { TokenIssuer, join, nextEvent } from '../helpers/media-session.ts';

const GENEROUS_LIMITS = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000' };

// The embedded deployment with its roles in separate processes on one data directory: events
// (revocations, archives, credential changes) cross from the process that answered to the one that holds
// the session. Both platforms are served in this process, each with its own connection to the store's
// file and its own bus (server/src/bus/sqlite.ts): events cross through the file, as between processes.
describe('roles in separate platforms on one data directory', () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-split-'));
  let media: ServedPlatform;
  let api: ServedPlatform;
  let issuer: TokenIssuer;
  const sessions: MediaSession[] = [];
  const signalingClients: SignalingClient[] = [];

  before(async () => {
    media = await serveInProcess({ dataDir, roles: ['media', 'signaling'], env: GENEROUS_LIMITS });
    api = await serveInProcess({
      dataDir, roles: ['api', 'token'], env: {
        ...GENEROUS_LIMITS, RTC_MEDIA_PUBLIC_PORT: new URL(media.urls['media']!).port, RTC_SIGNALING_PUBLIC_URL: media.urls['signaling']!,
      },
    });
    issuer = await TokenIssuer.create(() => api.api);
  });

  after(async () => {
    for (const s of sessions) await s.close();
    for (const c of signalingClients) c.close();
    await Promise.all([api?.stop(), media?.stop()]);
  });

  it('a revoke answered by the api platform closes the session held by the media platform (4003)', async () => {
    const token = await issuer.issue({ room_id: 'split-room', user_id: 'carol', role: 'speaker' });
    const bystanderToken = await issuer.issue({ room_id: 'split-room', user_id: 'dave', role: 'speaker' });
    const carol = await join(token);
    const dave = await join(bystanderToken);
    sessions.push(carol, dave);
    const disconnected = nextEvent(carol, 'disconnected', 5000);
    await issuer.revoke(token);
    const returnedAt = performance.now();
    const info = await disconnected;
    const latencyMs = performance.now() - returnedAt;
    assert.equal(info.code, 4003);
    assert.ok(latencyMs < 1000, `closed ${latencyMs.toFixed(0)} ms after the revoke returned`);
    assert.equal(dave.state, 'connected', 'the other participant stays');
  });

  it('an archive answered by the api platform ends the project\'s sessions held by the other platform (4003, revoked)', async () => {
    const archiving = await TokenIssuer.create(() => api.api);
    const bystanderToken = await issuer.issue({ room_id: 'split-archive', user_id: 'frank', role: 'speaker' });
    const frank = await join(bystanderToken);
    sessions.push(frank);
    const erin = await joinRoom(api.token, archiving.customer, { room_id: 'split-archive', user_id: 'erin', role: 'speaker' });
    signalingClients.push(erin.client);
    const erinMedia = await join(erin.token);
    sessions.push(erinMedia);
    const disconnected = nextEvent(erinMedia, 'disconnected', 5000);
    const started = performance.now();
    const res = await request(`${api.api}/v1/projects/${archiving.customer.projectId}/archive`, {
      method: 'POST', headers: bearer(archiving.customer.accessToken),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await disconnected).code, 4003);
    await erin.inbox.waitFor((e) => e.type === 'revoked', 2000, 'the revoked event');
    const latencyMs = performance.now() - started;
    assert.ok(latencyMs < 1000, `ended ${latencyMs.toFixed(0)} ms after the archive request was sent`);
    assert.equal(frank.state, 'connected', 'another project\'s participant stays');
  });
});
