/**
 * Revocation latency: from the moment `POST /v1/rtc/tokens/revoke` returned to the moment the app
 * SDK saw its media session closed with 4003, over 200 revocations (after 20 unmeasured ones).
 * Each round: a token issued over HTTP, a session joined through the SDK in a room where two other
 * participants keep exchanging frames (50 frames/s), the revoke call, the close. When the close
 * reaches the app before the HTTP response does, the latency counts as 0.
 * Target (docs/protocol/media.md, "Revocation and expiry"): p99 under 100 ms on one node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { connect, type MediaSession, type MediaToken } from '../sdk/app/src/index.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer, type BenchCredential } from './lib/platform.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'media-revocation';
const WARMUP = 20;
const TARGET_P99_MS = 100;

const COUNT = intSetting('BENCH_REVOCATIONS', 200, 200, 5000);

type Token = MediaToken & { readonly media: MediaToken['media'] & { readonly revocation_handle: string } };

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-media-revocation-'));
  const platform = await startPlatformServer({
    dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
    env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  const bystanders: MediaSession[] = [];
  try {
    const api = platform.urls['api']!;
    const cred: BenchCredential = await createCredential(api);
    const authorization = basicAuthorization(cred.appId, cred.appSecret);
    const issue = async (body: Record<string, unknown>): Promise<Token> => {
      const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify({ room_id: 'revocation-bench', ...body }), { authorization });
      if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
      return JSON.parse(res.text) as Token;
    };
    const join = (token: Token): Promise<MediaSession> => connect({ token, WebSocket, secure: false, reconnect: false });

    const speaker = await join(await issue({ user_id: 'speaker', role: 'speaker', publish_streams: [1] }));
    const listener = await join(await issue({ user_id: 'listener', role: 'audience', subscribe_room: true }));
    bystanders.push(speaker, listener);
    let heard = 0;
    listener.on('frame', () => void (heard += 1));
    const mic = await speaker.publish(1, 'audio');
    let spoken = 0;
    const talking = setInterval(() => {
      spoken += 1;
      void mic.send(new Uint8Array(160));
    }, 20);

    progress(`${WARMUP} + ${COUNT} revocations...`);
    const latencies: number[] = [];
    const calls: number[] = [];
    let closedFirst = 0;
    for (let i = 0; i < WARMUP + COUNT; i++) {
      const token = await issue({ user_id: `user-${i}`, role: 'audience', subscribe_room: true });
      const session = await join(token);
      const closed = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`revocation ${i}: the session was not closed within 5 s`)), 5000);
        session.on('revoked', () => {
          clearTimeout(timer);
          resolve(performance.now());
        });
      });
      const startedAt = performance.now();
      const res = await postJson(`${api}/v1/rtc/tokens/revoke`, JSON.stringify({ revocation_handle: token.media.revocation_handle }), { authorization });
      const returnedAt = performance.now();
      if (res.status !== 200) throw new Error(`revocation: ${res.status} ${res.text}`);
      const closedAt = await closed;
      if (i < WARMUP) continue;
      if (closedAt <= returnedAt) closedFirst += 1;
      latencies.push(Math.max(0, closedAt - returnedAt));
      calls.push(returnedAt - startedAt);
    }
    clearInterval(talking);
    await new Promise((resolve) => setTimeout(resolve, 200));
    latencies.sort((a, b) => a - b);
    calls.sort((a, b) => a - b);
    const p99 = percentile(latencies, 99);
    progress(`p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${latencies.at(-1)!.toFixed(2)} ms; ` +
      `${closedFirst} of ${COUNT} closed before the revoke call returned; bystander frames ${heard} of ${spoken}`);
    printFigure({ bench: BENCH, figure: 'revoke_to_close_p50', value: percentile(latencies, 50), unit: 'ms', samples: COUNT });
    printFigure({ bench: BENCH, figure: 'revoke_to_close_p99', value: p99, unit: 'ms', samples: COUNT, target: TARGET_P99_MS, met: p99 < TARGET_P99_MS });
    printFigure({ bench: BENCH, figure: 'revoke_to_close_max', value: latencies.at(-1)!, unit: 'ms', samples: COUNT });
    printFigure({ bench: BENCH, figure: 'closed_before_call_returned', value: closedFirst / COUNT, unit: 'fraction', samples: COUNT });
    printFigure({ bench: BENCH, figure: 'revoke_call_p50', value: percentile(calls, 50), unit: 'ms', samples: COUNT });
    printFigure({ bench: BENCH, figure: 'bystander_frames_delivered', value: spoken === 0 ? 1 : heard / spoken, unit: 'fraction' });
  } finally {
    for (const s of bystanders) await s.close();
    await platform.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
