/** What the tests of several nodes share (cluster.test.ts): waits on a node's answers and gauges, and free ports. */
import assert from 'node:assert/strict';
import type { TokenResponse } from '@rtc/protocol';
import type { Customer } from '../helpers/customer.ts';
import { request, type HttpResult } from '../helpers/http.ts';
import type { RunningServer } from '../helpers/platform.ts';
import { freeTcpPort } from '../helpers/ports.ts';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.ts';

/** How many results had each status. */
export const tally = (results: readonly HttpResult[]): Record<number, number> => {
  const counts: Record<number, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

/**
 * Issues once the node answers 200, following its `503 unavailable` and Retry-After meanwhile
 * (a node that is reconnecting, or whose view of the live media nodes is being refreshed).
 */
export async function issueFollowingRetryAfter(server: RunningServer, customer: Customer, body: Record<string, unknown>): Promise<TokenResponse> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const res = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body });
    if (res.status === 200) return res.json<TokenResponse>();
    assert.equal(res.status, 503, res.text);
    await new Promise<void>((resolve) => setTimeout(resolve, Number(res.headers['retry-after'] ?? '1') * 100));
  }
  assert.fail(`${server.token} still refuses tokens`);
}

/**
 * A node started on a port picked now. Another process of the suite may take that port (an
 * outgoing connection's local port) between the pick and the bind: a port found taken is picked again.
 */
export async function startOnFreePort(start: (port: number) => Promise<RunningServer>): Promise<{ server: RunningServer; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeTcpPort('127.0.0.1');
    try {
      return { server: await start(port), port };
    } catch (err) {
      if (attempt >= 5 || !String(err).includes(`port ${port} is in use`)) throw err;
    }
  }
}

/** Resolves once the token node's `rtc_media_nodes_live` gauge reads `count`. */
export async function mediaNodesSeen(server: RunningServer, count: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const res = await request(`${server.urls['admin']}/metrics`);
    if (sampleValue(parsePrometheusText(res.text), 'rtc_media_nodes_live') === count) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`${server.token} never saw ${count} live media nodes`);
}
