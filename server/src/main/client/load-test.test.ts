/** `rtc load-test` run in this process against a live platform: synthetic WebRTC publishers and subscribers. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LoadSummary } from './load-test-report.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { TokenIssuer } from '../../../../test/helpers/media-session.ts';
import { runRtcInProcess, startRtc } from '../../../../test/helpers/rtc-inproc.ts';

describe('rtc load-test against a live platform', () => {
  let server: ServedPlatform;
  let env: Record<string, string>;

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'media'], env: { RTC_MEDIA_PUBLIC_HOST: '127.0.0.1' } });
    const issuer = await TokenIssuer.create(() => server.api);
    env = { RTC_APP_ID: issuer.customer.appId, RTC_APP_SECRET: issuer.customer.appSecret };
  });
  after(async () => {
    await server.stop();
  });

  it('joins every publisher and subscriber, and reports what the subscribers received', async () => {
    const res = await runRtcInProcess([
      'load-test', '--url', server.token, '--room', 'load-room', '--publishers', '2', '--subscribers', '2', '--duration', '3s',
      '--video-bitrate', '100k', '--json',
    ], env);
    assert.equal(res.code, 0, res.stderr);
    const s = JSON.parse(res.stdout) as LoadSummary;
    assert.equal(s.room, 'load-room');
    assert.equal(s.interrupted, false);
    assert.deepEqual(s.failed_joins, []);
    assert.deepEqual(s.dropped, []);
    assert.deepEqual([s.publishers.requested, s.publishers.joined, s.subscribers.requested, s.subscribers.joined], [2, 2, 2, 2]);
    assert.ok(s.duration_seconds >= 3 && s.duration_seconds < 10, `window ${s.duration_seconds} s`);

    const { p50, p95, max } = s.join_ms;
    assert.ok(p50 !== null && p95 !== null && max !== null && p50 > 0 && p50 <= p95 && p95 <= max, JSON.stringify(s.join_ms));

    // two publishers of 100 kbit/s video and 32 kbit/s audio each
    assert.ok(s.publishers.bytes > 0 && s.publishers.bitrate_bps > 150_000 && s.publishers.bitrate_bps < 400_000, `sent ${s.publishers.bitrate_bps}`);
    assert.ok(s.publishers.frames_per_second > 20, `sent ${s.publishers.frames_per_second} frames/s`);
    assert.ok(s.subscribers.bytes > 0 && s.subscribers.packets > 0 && s.subscribers.bitrate_bps > 0, `received ${s.subscribers.bytes} bytes`);
    // per video stream: each subscriber receives two streams of 30 frames/s, not one of 60
    assert.equal(s.subscribers.video_streams, 4);
    assert.ok(s.subscribers.frames_per_second > 0 && s.subscribers.frames_per_second <= 35, `received ${s.subscribers.frames_per_second} frames/s`);
    // the one layer sent without simulcast, by each subscriber of each publisher's video stream
    assert.deepEqual(s.subscribers.received_layers.map((r) => r.participant).sort(), ['sub-0', 'sub-1']);
    for (const r of s.subscribers.received_layers) {
      assert.deepEqual(r.streams.map((st) => st.stream_id).sort(), [1, 3], JSON.stringify(r));
      for (const st of r.streams) assert.deepEqual(st.layers, [{ rid: null, width: 1280, height: 720 }], JSON.stringify(r));
    }
    assert.ok(s.subscribers.packet_loss_percent >= 0 && s.subscribers.packet_loss_percent <= 100);
    assert.ok(s.subscribers.packets_expected >= s.subscribers.packets_lost);
    assert.ok(s.cpu.user_seconds > 0 && s.cpu.percent > 0, JSON.stringify(s.cpu));
    // each participant: its id and the node placement gave it; a subscriber's delay through the node and its loss
    const node = new URL(server.urls['media']!).host;
    assert.deepEqual(s.participants.map((p) => [p.participant, p.role, p.node]),
      [['pub-0', 'publisher', node], ['pub-1', 'publisher', node], ['sub-0', 'subscriber', node], ['sub-1', 'subscriber', node]]);
    for (const p of s.participants) {
      assert.match(p.participant_id ?? '', /^pa_/, JSON.stringify(p));
      if (p.role === 'publisher') {
        assert.deepEqual([p.one_way_delay_ms, p.packets_expected, p.packets_lost], [null, null, null]);
        continue;
      }
      const { p50, p99 } = p.one_way_delay_ms!;
      assert.ok(p50 !== null && p99 !== null && p50 > 0 && p50 <= p99 && p99 < 5000, JSON.stringify(p));
      assert.ok(p.packets_expected! > 0 && p.packets_lost! <= p.packets_expected!, JSON.stringify(p));
    }
    assert.equal(s.participants.reduce((n, p) => n + (p.packets_expected ?? 0), 0), s.subscribers.packets_expected);

    // progress went to standard error, one plain line at a time off a terminal
    assert.match(res.stderr, /^joined 4\/4 {2}\d+ s {2}out .+ {2}in .+$/m);
  });

  it('sends simulcast layers and prints a table without --json', async () => {
    const res = await runRtcInProcess([
      'load-test', '--url', server.token, '--subscribers', '1', '--publishers', '1', '--duration', '2s', '--audio', 'off', '--simulcast',
      '--video-bitrate', '300k',
    ], env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^load test of room load-test-[0-9a-f]{8} at /m);
    assert.match(res.stdout, /^join time: p50 \d+ ms, p95 \d+ ms, max \d+ ms$/m);
    assert.match(res.stdout, /^ {2}joined +1\/1 +1\/1$/m);
    const frames = /^ {2}video frames\/s \(per stream\) +([\d.]+) +([\d.]+)$/m.exec(res.stdout);
    assert.ok(frames && Number(frames[1]) > 20 && Number(frames[2]) > 0, res.stdout);
    // the subscriber receives one of the three layers: which one, by rid and size
    assert.match(res.stdout, /^ {2}video layer received +- +[qhf] \d+x\d+ ×1$/m);
    assert.match(res.stdout, /^ {2}sub-0: stream 1 [qhf] \d+x\d+( → [qhf] \d+x\d+)*$/m);
    assert.match(res.stdout, /^cpu of this process: /m);
  });

  it('refuses a wrong App Secret with the API\'s error, exit 1, and never prints the secret', async () => {
    const secret = `sk_${'B'.repeat(43)}`;
    const res = await runRtcInProcess(['load-test', '--url', server.token, '--publishers', '2', '--subscribers', '2', '--duration', '2s', '--json'], {
      RTC_APP_ID: env['RTC_APP_ID']!, RTC_APP_SECRET: secret,
    });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^rtc: invalid_credentials: /m);
    assert.ok(!res.stdout.includes(secret) && !res.stderr.includes(secret), 'the secret is never printed');
    const flag = await runRtcInProcess(['load-test', '--url', server.token, '--app-id', env['RTC_APP_ID']!, '--app-secret', secret, '--duration', '2s'], {});
    assert.equal(flag.code, 1);
    assert.ok(!flag.stdout.includes(secret) && !flag.stderr.includes(secret), 'the secret is never printed');
  });

  it('leaves every session on SIGTERM and prints the summary so far', async () => {
    const run = startRtc(['load-test', '--url', server.token, '--room', 'load-stop',
      '--publishers', '1', '--subscribers', '1', '--duration', '5m', '--video-bitrate', '100k', '--json'], env);
    // the first progress line that shows both joined
    await run.stderrMatches(/^joined 2\/2 /m);
    run.signal('SIGTERM');
    const { code, stdout, stderr } = await run.result;
    assert.equal(code, 143, stderr);
    const s = JSON.parse(stdout) as LoadSummary;
    assert.equal(s.interrupted, true);
    assert.equal(s.subscribers.joined, 1);
    assert.deepEqual(s.dropped, []);
    // every session left: the room is gone
    const shown = await runRtcInProcess(['rooms', 'show', 'load-stop', '--url', server.token], env);
    assert.equal(shown.code, 1, shown.stdout);
    assert.match(shown.stderr, /not_found/);
  });
});
