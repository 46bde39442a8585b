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
  candidateTypes, currentVideo, joinPlatform, pageNow, publishCamera, receiveQuality, sendQuality, startCallLab, waitForVideo, type CallLab,
} from './helpers/network-call.ts';
import type { ReceiveQuality } from './helpers/call-quality.ts';
import type { PageMeasure, PageRtc } from './helpers/webrtc-page.ts';
import type { CallPage } from './helpers/network-call.ts';
import { TokenIssuer, type TokenBody } from './helpers/media-session.ts';
import { startMediaServer } from './e2e/media-server.ts';

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

  const token = (body: Omit<TokenBody, 'room_id' | 'turn' | 'ttl_seconds'>, room = 'lossy-call'): Promise<TokenResponse> =>
    issuer.issue({ room_id: room, turn: true, ttl_seconds: 600, ...body });

  /** The page's SDK view: remote tracks, layer and pause reports, end-to-end encryption counts. */
  const measure = (p: CallPage): Promise<PageMeasure> => p.page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.measure());

  /** Polls the page's received audio (over the last 4 s) until it plays with little concealed. */
  const hearsAudio = async (p: CallPage, what: string): Promise<ReceiveQuality> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const to = await pageNow(p);
      const q = await receiveQuality(p, { from: to - 4000, to });
      if (q.audioKbps > 5 && q.audioConcealedPercent < 10) return q;
      if (Date.now() > deadline) assert.fail(`${p.name}: ${what}: ${JSON.stringify(q)}`);
      await p.page.waitForTimeout(1000);
    }
  };

  /** A room of one publisher (640x480 camera in two layers, microphone) and the given subscribers. */
  const call = async (room: string, subscribers: readonly { name: string; link?: Parameters<CallLab['openPage']>[0]['link'] }[]) => {
    const pub = await lab!.openPage({ name: `${room}-pub`, kind: 'platform' });
    const subs: CallPage[] = [];
    for (const s of subscribers) subs.push(await lab!.openPage({ name: `${room}-${s.name}`, kind: 'platform', ...(s.link ? { link: s.link } : {}) }));
    await joinPlatform(pub, await token({ user_id: 'pub', role: 'speaker', publish_streams: [1, 2] }, room));
    for (const [i, sub] of subs.entries()) await joinPlatform(sub, await token({ user_id: `sub${i}`, role: 'participant', subscribe_room: true }, room));
    await publishCamera(pub, lab!.camera);
    return { pub, subs };
  };

  it('a subscriber on a link losing 3 % of packets each way keeps decoding the video and playing the audio', async () => {
    const pub = await lab!.openPage({ name: 'pub', kind: 'platform' });
    const sub = await lab!.openPage({ name: 'sub', kind: 'platform', link: bothWays({ lossRate: 0.03 }) });
    await joinPlatform(pub, await token({ user_id: 'pub', role: 'speaker', publish_streams: [1, 2] }));
    await joinPlatform(sub, await token({ user_id: 'sub', role: 'participant', subscribe_room: true }));
    await publishCamera(pub, lab!.camera);
    // a deadline, not a wait: the relay allocation, ICE and DTLS all cross the lossy link, and on a
    // loaded machine their retransmissions can take more than the usual 30 s
    await waitForVideo(sub, (v) => v.framesDecoded > 0, 'the first frame of pub\'s video', 60_000);
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

  it('a subscriber capped at 300 kbit/s keeps the audio and the smaller layer while an uncapped one keeps the larger; lifted, the cap gives the larger back', async () => {
    const { subs: [capped, open] } = await call('capped-call', [{ name: 'capped', link: { down: { rateKbps: 300 } } }, { name: 'open' }]);
    // the uncapped subscriber gets the full 640x480 layer, the capped one the 320x240 layer, both decoding
    await waitForVideo(open!, (v) => v.frameWidth === 640 && v.fps >= 15, 'the larger layer at 15 fps or more');
    await waitForVideo(capped!, (v) => v.frameWidth === 320 && v.fps >= 15, 'the smaller layer at 15 fps or more', 45_000);
    await hearsAudio(capped!, 'the audio beside the smaller layer');
    assert.equal((await waitForVideo(open!, (v) => v.fps >= 15, 'still decoding')).frameWidth, 640, 'the capped subscriber took nothing from the other');
    const before = await measure(capped!);
    assert.ok(before.videoReports.some((r) => r.type === 'streamLayer' && r['width'] === 320), JSON.stringify(before.videoReports));

    // the cap lifted: the larger layer, switched to at a key frame, decoded without a frame lost to decryption
    await capped!.link.set({ down: { rateKbps: null } });
    await waitForVideo(capped!, (v) => v.frameWidth === 640 && v.fps >= 15, 'the larger layer once the cap is lifted', 60_000);
    const after = await measure(capped!);
    assert.ok(after.videoReports.some((r) => r.type === 'streamLayer' && r['width'] === 640), JSON.stringify(after.videoReports));
    assert.equal(after.e2ee?.dropped, 0, `frames that did not decrypt: ${JSON.stringify(after.e2ee)}`);
    assert.ok((after.e2ee?.decrypted ?? 0) > 100, JSON.stringify(after.e2ee));
    assert.deepEqual(after.events.filter((e) => e.startsWith('mediaError')), []);
  });

  it('pauses the video of a subscriber whose link carries only the audio, tells it, and resumes the video when the cap is lifted', async () => {
    const { subs: [sub] } = await call('paused-call', [{ name: 'sub', link: { down: { rateKbps: 120 } } }]);
    const deadline = Date.now() + 45_000;
    let m = await measure(sub!);
    while (!m.videoReports.some((r) => r.type === 'streamPaused')) {
      if (Date.now() > deadline) assert.fail(`no stream_paused: ${JSON.stringify(m.videoReports)}`);
      await sub!.page.waitForTimeout(500);
      m = await measure(sub!);
    }
    assert.deepEqual(m.videoReports.find((r) => r.type === 'streamPaused'), { type: 'streamPaused', streamId: 2, reason: 'bandwidth' });
    await hearsAudio(sub!, 'the audio while the video is paused');

    await sub!.link.set({ down: { rateKbps: null } });
    // the resume is told; it is waited for as an event of its own: frames from before the pause,
    // repaired once the cap is lifted, may decode before the video comes back
    const lastReport = (reports: PageMeasure['videoReports']) => reports.filter((r) => r.type !== 'streamLayer').at(-1);
    const toldBy = Date.now() + 60_000;
    m = await measure(sub!);
    while (lastReport(m.videoReports)?.type !== 'streamResumed') {
      if (Date.now() > toldBy) assert.fail(`no stream_resumed: ${JSON.stringify({ reports: m.videoReports, events: m.events, video: await currentVideo(sub!) })}`);
      await sub!.page.waitForTimeout(500);
      m = await measure(sub!);
    }
    const resumed = await waitForVideo(sub!, (v) => v.fps >= 15, 'the video again once the cap is lifted', 60_000);
    assert.ok(resumed.frameWidth !== undefined && resumed.frameWidth > 0);
    m = await measure(sub!);
    assert.deepEqual(lastReport(m.videoReports), { type: 'streamResumed', streamId: 2 }, JSON.stringify({ reports: m.videoReports, events: m.events }));
    assert.equal(m.e2ee?.dropped, 0, JSON.stringify(m.e2ee));
  });

  it('a publisher whose uplink is capped at 500 kbit/s stays under its cap, and its subscriber decodes smoothly', async () => {
    const pub = await lab!.openPage({ name: 'uplink-pub', kind: 'platform', link: { up: { rateKbps: 500 } } });
    const sub = await lab!.openPage({ name: 'uplink-sub', kind: 'platform' });
    await joinPlatform(pub, await token({ user_id: 'pub', role: 'speaker', publish_streams: [1, 2] }, 'uplink-call'));
    await joinPlatform(sub, await token({ user_id: 'sub', role: 'participant', subscribe_room: true }, 'uplink-call'));
    await publishCamera(pub, lab!.camera);
    await waitForVideo(sub, (v) => v.framesDecoded > 0, 'the first frame');
    // once the publisher's encoder has found its cap: the last 8 s sent under it, decoded without a stall
    const deadline = Date.now() + 60_000;
    for (;;) {
      await pub.page.waitForTimeout(1000);
      const to = await pageNow(pub);
      const sent = (await sendQuality(pub, { from: to - 8000, to }))['session']!;
      const got = await receiveQuality(sub, { from: to - 8000, to });
      const { up } = await pub.link.stats();
      const dropped = up.queueDropped / Math.max(up.packets, 1);
      if (sent.videoKbps + sent.audioKbps < 500 && dropped < 0.05 && got.meanFps >= 20 && got.stallSeconds === 0) break;
      if (Date.now() > deadline) assert.fail(`sent ${JSON.stringify(sent)}, received ${JSON.stringify(got)}, link up ${JSON.stringify(up)}`);
    }
  });
});
