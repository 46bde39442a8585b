import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from '../../server/src/metrics/metrics.ts';
import { parsePrometheusText, sampleValue } from './prometheus.ts';

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
  ];
  for (const [what, text] of malformed) {
    it(`refuses ${what}`, () => assert.throws(() => parsePrometheusText(text)));
  }

  it('reads what the platform\'s registry writes', async () => {
    const metrics = createMetrics();
    metrics.tokens.issued(0.002);
    metrics.tokens.refused('invalid_request', 0.0005);
    metrics.watchMedia({ sessionCount: 2, roomCount: 1, stats: { framesForwarded: 7, framesDropped: 1, rtpForwarded: 0 } });
    const families = parsePrometheusText(await metrics.registry.metrics());
    assert.equal(sampleValue(families, 'rtc_tokens_issued_total'), 1);
    assert.equal(sampleValue(families, 'rtc_tokens_refused_total', { code: 'invalid_request' }), 1);
    assert.equal(sampleValue(families, 'rtc_token_issue_duration_seconds_bucket', { outcome: 'issued', le: '0.0025' }), 1);
    assert.equal(sampleValue(families, 'rtc_media_frames_forwarded_total'), 7);
    assert.equal(sampleValue(families, 'rtc_media_sessions'), 2);
    assert.equal(sampleValue(families, 'rtc_webhook_deliveries_total', { outcome: 'delivered' }), 0);
    assert.ok(families.has('process_cpu_user_seconds_total'), 'default process metrics are collected');
  });
});
