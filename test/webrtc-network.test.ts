/**
 * A call through the platform over an impaired network: headless Chromium pages, each relay-only
 * through coturn behind an impaired link of its own (test/helpers/network-call.ts). Thresholds are
 * loose and every check polls until it holds: the machine is a loaded 2-core one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { startCoturn, type Coturn } from './helpers/coturn.ts';
import type { RunningServer } from './helpers/platform.ts';
import { bothWays } from './helpers/impair/link-settings.ts';
import {
  candidateTypes, joinPlatform, pageNow, publishCamera, receiveQuality, startCallLab, waitForVideo, type CallLab,
} from './helpers/network-call.ts';
import type { ReceiveQuality } from './helpers/call-quality.ts';
import { startMediaServer, TokenIssuer, type TokenBody } from './e2e/media-helpers.ts';

describe('a call through the platform over an impaired network (Chromium, each page relay-only through its own link)', () => {
  const secret = 'turn-shared-secret-for-network-tests';
  let coturn: Coturn | undefined;
  let server: RunningServer | undefined;
  let issuer: TokenIssuer;
  let lab: CallLab | undefined;

  before(async () => {
    coturn = await startCoturn({ secret });
    server = await startMediaServer({
      env: { RTC_TURN_SECRET: secret, RTC_TURN_URIS: `turn:${coturn.host}:${coturn.port}?transport=udp` },
    });
    const api = server.api;
    issuer = await TokenIssuer.create(() => api);
    lab = await startCallLab({ turn: { host: coturn.host, port: coturn.port, secret } });
  });

  after(async () => {
    await lab?.close();
    await server?.stop();
    await coturn?.stop();
  });

  const token = (body: Omit<TokenBody, 'room_id' | 'turn' | 'ttl_seconds'>): Promise<TokenResponse> =>
    issuer.issue({ room_id: 'lossy-call', turn: true, ttl_seconds: 600, ...body });

  it('a subscriber on a link losing 3 % of packets each way keeps decoding the video and playing the audio', async () => {
    const pub = await lab!.openPage({ name: 'pub', kind: 'platform' });
    const sub = await lab!.openPage({ name: 'sub', kind: 'platform', link: bothWays({ lossRate: 0.03 }) });
    await joinPlatform(pub, await token({ user_id: 'pub', role: 'speaker', publish_streams: [1, 2] }));
    await joinPlatform(sub, await token({ user_id: 'sub', role: 'participant', subscribe_room: true }));
    await publishCamera(pub, lab!.camera);
    await waitForVideo(sub, (v) => v.framesDecoded > 0, 'the first frame of pub\'s video');
    assert.deepEqual(await candidateTypes(sub), { session: 'relay' }, 'the subscriber goes through coturn, so through its link');

    // from the first frame on, the window grows until its figures hold
    const from = await pageNow(sub);
    const deadline = Date.now() + 40_000;
    let q: ReceiveQuality;
    for (;;) {
      q = await receiveQuality(sub, { from, to: await pageNow(sub) });
      if (q.seconds >= 8 && q.meanFps >= 10 && q.audioConcealedPercent < 25 && q.audioKbps > 5) break;
      if (Date.now() > deadline) assert.fail(`the subscriber's call over 3 % loss: ${JSON.stringify(q)}`);
      await sub.page.waitForTimeout(1000);
    }
    assert.ok(q.frameWidth !== undefined && q.frameWidth > 0, JSON.stringify(q));

    // the loss was really applied to the call's packets, both ways
    const { up, down } = await sub.link.stats();
    assert.ok(down.delivered > 300 && down.lost > 0, `down: ${JSON.stringify(down)}`);
    assert.ok(up.delivered > 10 && up.lost + up.delivered === up.packets, `up: ${JSON.stringify(up)}`);
  });
});
