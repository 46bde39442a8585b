import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MediaStats } from '../../server/src/metrics/media-stats.ts';
import { createMetrics } from '../../server/src/metrics/metrics.ts';
import { parsePrometheusText, parseStrictExposition, sampleValue } from './prometheus.ts';

describe('the strict Prometheus text parser of the tests', () => {
  it('reads families, types, labels with escapes, and special values', () => {
    const families = parsePrometheusText([
      '# HELP a_total Things, with a \\\\ and a \\n', '# TYPE a_total counter', 'a_total{code="x\\"y",z="1"} 3', 'a_total{code="b"} 0',
      '# TYPE g gauge', 'g -1.5e3', 'g{k="v"} NaN', '# a comment', '',
      '# TYPE h histogram', 'h_bucket{le="0.1"} 1', 'h_bucket{le="+Inf"} 2', 'h_sum 0.3', 'h_count 2', '',
    ].join('\n'));
    assert.equal(families.get('a_total')?.help, 'Things, with a \\ and a \n');
    assert.equal(sampleValue(families, 'a_total', { code: 'x"y', z: '1' }), 3);
    assert.equal(sampleValue(families, 'g'), -1500);
    assert.equal(families.get('h')?.type, 'histogram');
    assert.throws(() => sampleValue(families, 'a_total', { code: 'c' }), /no series/);
  });

  const malformed: [string, string][] = [
    ['no final newline', 'a 1'],
    ['a value that is not a number', 'a one\n'],
    ['a missing value', 'a{k="v"}\n'],
    ['an unterminated label value', 'a{k="v} 1\n'],
    ['an unknown escape', 'a{k="\\t"} 1\n'],
    ['a repeated label', 'a{k="1",k="2"} 1\n'],
    ['a repeated series', 'a{k="1"} 1\na{k="1"} 2\n'],
    ['a TYPE after the samples', 'a 1\n# TYPE a gauge\n'],
    ['a second TYPE', '# TYPE a gauge\n# TYPE a gauge\n'],
    ['an unknown type', '# TYPE a meter\n'],
    ['a split family', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{k="2"} 2\n'],
    ['a negative counter', '# TYPE a counter\na -1\n'],
    ['buckets that are not cumulative', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ['a +Inf bucket that differs from the count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n'],
    ['two spaces before the value', 'a  1\n'],
    ['a malformed HELP', '# HELP\n'],
    ['NaN spelled Nan', 'a Nan\n'],
    ['NaN in lower case', 'a nan\n'],
    ['an infinity without its sign', 'a Inf\n'],
    ['Infinity spelled out', 'a +Infinity\n'],
  ];
  for (const [what, text] of malformed) {
    it(`refuses ${what}`, () => assert.throws(() => parsePrometheusText(text)));
  }

  it('reads what the platform\'s registry writes', async () => {
    const metrics = createMetrics();
    metrics.tokens.issued(0.002);
    metrics.tokens.refused('invalid_request', 0.0005);
    const stats = new MediaStats();
    stats.framesForwarded = 7;
    stats.framesDropped = 1;
    metrics.watchMedia({
      sessionCount: 2, roomCount: 1, stats, liveCounts: () => ({ participants: 2, publishers: 1, subscribers: 1, streams: 1 }),
    });
    const families = parseStrictExposition(await metrics.registry.metrics());
    assert.equal(sampleValue(families, 'rtc_tokens_issued_total'), 1);
    assert.equal(sampleValue(families, 'rtc_tokens_refused_total', { code: 'invalid_request' }), 1);
    assert.equal(sampleValue(families, 'rtc_token_issue_duration_seconds_bucket', { outcome: 'issued', le: '0.0025' }), 1);
    assert.equal(sampleValue(families, 'rtc_media_frames_forwarded_total'), 7);
    assert.equal(sampleValue(families, 'rtc_media_sessions'), 2);
    assert.equal(sampleValue(families, 'rtc_webhook_deliveries_total', { outcome: 'delivered' }), 0);
    assert.ok(families.has('process_cpu_user_seconds_total'), 'default process metrics are collected');
  });

  it('counts the media path\'s plain numbers by transport, direction and kind, as they grow between scrapes', async () => {
    const metrics = createMetrics();
    const stats = new MediaStats();
    metrics.watchMedia({ sessionCount: 0, roomCount: 0, stats, liveCounts: () => ({ participants: 3, publishers: 1, subscribers: 2, streams: 2 }) });
    const empty = parseStrictExposition(await metrics.registry.metrics());
    assert.equal(sampleValue(empty, 'rtc_media_bytes_total', { transport: 'webrtc', direction: 'out', kind: 'video' }), 0);
    assert.equal(sampleValue(empty, 'rtc_media_ice_total', { outcome: 'timed_out' }), 0);
    assert.equal(sampleValue(empty, 'rtc_media_rtt_seconds_count'), 0);
    assert.throws(() => sampleValue(empty, 'rtc_media_bytes_total', { transport: 'webrtc', direction: 'in', kind: 'data' }), /no series/);

    stats.webrtcOut.add(2, 1000);
    stats.webrtcOut.add(2, 200);
    stats.websocketIn.add(3, 50);
    stats.packetsLostOut = 4;
    stats.nacksReceived = 2;
    stats.keyFrameRequestsSent = 1;
    stats.layerSwitchesDown = 1;
    stats.ice.connected = 1;
    stats.icePaths.relay = 1;
    stats.observeRtt(0.04);
    const after = parseStrictExposition(await metrics.registry.metrics());
    assert.equal(sampleValue(after, 'rtc_media_bytes_total', { transport: 'webrtc', direction: 'out', kind: 'video' }), 1200);
    assert.equal(sampleValue(after, 'rtc_media_packets_total', { transport: 'webrtc', direction: 'out', kind: 'video' }), 2);
    assert.equal(sampleValue(after, 'rtc_media_packets_total', { transport: 'websocket', direction: 'in', kind: 'data' }), 1);
    assert.equal(sampleValue(after, 'rtc_media_packets_lost_total', { direction: 'out' }), 4);
    assert.equal(sampleValue(after, 'rtc_media_nacks_total', { direction: 'received' }), 2);
    assert.equal(sampleValue(after, 'rtc_media_key_frame_requests_total', { direction: 'sent' }), 1);
    assert.equal(sampleValue(after, 'rtc_media_layer_switches_total', { direction: 'down' }), 1);
    assert.equal(sampleValue(after, 'rtc_media_ice_total', { outcome: 'connected' }), 1);
    assert.equal(sampleValue(after, 'rtc_media_ice_selected_pairs_total', { path: 'relay' }), 1);
    assert.equal(sampleValue(after, 'rtc_media_rtt_seconds_bucket', { le: '0.05' }), 1);
    assert.deepEqual(['participants', 'publishers', 'subscribers', 'streams'].map((g) => sampleValue(after, `rtc_media_${g}`)), [3, 1, 2, 2]);
    // a third scrape with nothing new keeps the totals
    const again = parseStrictExposition(await metrics.registry.metrics());
    assert.equal(sampleValue(again, 'rtc_media_bytes_total', { transport: 'webrtc', direction: 'out', kind: 'video' }), 1200);
  });

  it('never writes NaN for the event loop lag, even for scrapes closer together than its sampling (prom-client wrote Nan)', async () => {
    const metrics = createMetrics();
    // back to back, within one event loop sampling interval: no delay sampled in between
    const texts = [await metrics.registry.metrics(), await metrics.registry.metrics(), await metrics.registry.metrics()];
    for (const text of texts) {
      const families = parseStrictExposition(text);
      for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_mean_seconds', 'nodejs_eventloop_lag_min_seconds']) {
        assert.equal(families.get(name)?.type, 'gauge', name);
      }
      // a measured minimum is a delay of the loop, not the histogram's empty marker (9.2e9 s)
      for (const s of families.get('nodejs_eventloop_lag_min_seconds')?.samples ?? []) assert.ok(s.value < 60, `min ${s.value}`);
    }
    // once the sampler has measured the loop (its first ticks), every gauge has a value
    const deadline = Date.now() + 10_000;
    let measured = parseStrictExposition(await metrics.registry.metrics());
    while (!measured.get('nodejs_eventloop_lag_mean_seconds')?.samples.length || !measured.get('nodejs_eventloop_lag_seconds')?.samples.length) {
      assert.ok(Date.now() < deadline, 'the event loop lag was never measured');
      await new Promise((resolve) => setTimeout(resolve, 20));
      measured = parseStrictExposition(await metrics.registry.metrics());
    }
    for (const suffix of ['', '_min', '_max', '_mean', '_stddev', '_p50', '_p90', '_p99']) {
      const value = sampleValue(measured, `nodejs_eventloop_lag${suffix}_seconds`);
      assert.ok(value >= 0 && value < 60, `${suffix}: ${value}`);
    }
  });

  it('reports a stall of the event loop in its delays, sampled on the process\'s shared 50 ms timer', async () => {
    const metrics = createMetrics();
    const maxDelay = async (): Promise<number | undefined> =>
      parseStrictExposition(await metrics.registry.metrics()).get('nodejs_eventloop_lag_max_seconds')?.samples[0]?.value;
    const waitForDelay = async (atLeast: number): Promise<number> => {
      const deadline = Date.now() + 10_000;
      let max = 0;
      while (max === 0 || max < atLeast) {
        assert.ok(Date.now() < deadline, `no delay of ${atLeast} s measured (max ${max})`);
        await new Promise((resolve) => setTimeout(resolve, 10));
        max = Math.max(max, (await maxDelay()) ?? 0);
      }
      return max;
    };
    await waitForDelay(0); // the timer ran twice: its phase is set and a delay measured
    const stallMs = 150;
    const until = performance.now() + stallMs;
    while (performance.now() < until) { /* the loop is held */ }
    // the run due during the stall comes at least stallMs - 50 ms late
    const max = await waitForDelay((stallMs - 50) / 1000);
    assert.ok(max < 60, `max ${max}`);
  });
});
