import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { TokenIssuer, join, nextEvent } from './media-helpers.ts';

const GENEROUS_LIMITS = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000' };

// The embedded deployment with its roles in separate processes on one data directory: events
// (revocations, credential changes) cross from the process that answered to the one that holds
// the session.
describe('roles in separate processes on one data directory', () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-split-'));
  let media: RunningServer;
  let api: RunningServer;
  let issuer: TokenIssuer;
  const sessions: MediaSession[] = [];

  before(async () => {
    media = await startServer({ dataDir, roles: ['media'], env: GENEROUS_LIMITS });
    api = await startServer({
      dataDir, roles: ['api', 'token'], env: { ...GENEROUS_LIMITS, RTC_MEDIA_PUBLIC_PORT: new URL(media.urls['media']!).port },
    });
    issuer = await TokenIssuer.create(() => api.api);
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await Promise.all([api?.stop(), media?.stop()]);
  });

  it('a revoke answered by the api process closes the session held by the media process (4003)', async () => {
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
});
