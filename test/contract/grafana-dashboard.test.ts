/**
 * docs/operations/grafana-dashboard.json against the platform's metric registry: every metric an
 * expression selects is one the platform reports, so a renamed metric breaks this test, not a
 * customer's dashboard. test/e2e/metrics.test.ts checks the same against a running platform.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MediaStats } from '../../server/src/metrics/media-stats.ts';
import { createMetrics } from '../../server/src/metrics/metrics.ts';
import { allPanels, expressions, metricNames, readDashboard, reportedNames } from '../helpers/grafana.ts';
import { parseStrictExposition } from '../helpers/prometheus.ts';

async function registryNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  metrics.watchMedia({ sessionCount: 0, roomCount: 0, stats: new MediaStats(), liveCounts: () => ({ participants: 0, publishers: 0, subscribers: 0, streams: 0 }) });
  metrics.watchSignaling({ openStreams: 0 });
  metrics.watchMediaNodes({ nodes: () => [], overCapacityPlacements: () => 0 });
  return reportedNames(parseStrictExposition(await metrics.registry.metrics()));
}

describe('the Grafana dashboard', () => {
  it('reads the metric names of PromQL expressions, not their functions, labels, ranges or numbers', () => {
    assert.deepEqual(metricNames('histogram_quantile(0.99, sum by (le) (rate(a_bucket{outcome="issued",instance=~"$instance"}[$__rate_interval])))'), ['a_bucket']);
    assert.deepEqual(metricNames('sum by (direction) (rate(x_total[5m])) / on (direction) sum without (kind) (rate(y_total{k="by (z)"}[1m])) * 8'),
      ['x_total', 'y_total']);
    assert.deepEqual(metricNames('up == bool 1 and on (job) z'), ['up', 'z']);
  });

  it('is an importable dashboard with a Prometheus data source variable used by every panel', () => {
    const dashboard = readDashboard();
    assert.equal(dashboard.uid, 'rtc-platform');
    const variable = dashboard.templating.list.find((v) => v.type === 'datasource');
    assert.deepEqual([variable?.name, variable?.query], ['datasource', 'prometheus']);
    const panels = allPanels(dashboard).filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 15, `${panels.length} panels`);
    for (const panel of panels) {
      const { datasource } = panel as { datasource?: { type: string; uid: string } };
      assert.deepEqual(datasource, { type: 'prometheus', uid: '${datasource}' }, panel.title);
      assert.ok((panel.targets ?? []).length > 0, `${panel.title} has no query`);
    }
  });

  it('uses only metrics the platform\'s registry reports', async () => {
    const reported = await registryNames();
    const used = expressions(readDashboard()).flatMap(({ panel, expr }) => metricNames(expr).map((name) => ({ panel, name })));
    assert.ok(used.length >= 30, `${used.length} metric uses`);
    assert.deepEqual(used.filter(({ name }) => !reported.has(name)), []);
    // the panels the operations guide promises
    const names = new Set(used.map((u) => u.name));
    for (const name of [
      'rtc_tokens_issued_total', 'rtc_token_revocations_total', 'rtc_media_rooms', 'rtc_media_participants', 'rtc_media_bytes_total',
      'rtc_media_packets_lost_total', 'rtc_media_nacks_total', 'rtc_media_key_frame_requests_total', 'rtc_media_rtt_seconds_bucket',
      'rtc_media_ice_total', 'rtc_turn_credentials_total', 'rtc_media_layer_switches_total', 'nodejs_eventloop_lag_p99_seconds',
    ]) assert.ok(names.has(name), name);
  });
});
