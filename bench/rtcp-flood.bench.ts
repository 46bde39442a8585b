/**
 * Hostile RTCP: what the worst datagram a subscriber can send costs the media node (docs/decisions/security.md,
 * "What a client's RTP and RTCP may cost"). The datagram is 1,200 bytes of 30 transport-cc
 * feedbacks, each claiming 65,535 received packets in 40 bytes (test/helpers/hostile-rtcp.ts).
 *
 * - parse: in this process, CPU per datagram of werift 0.23.0's own RTCP parser (the baseline, what
 *   the node did before the checks) and of the node's checked parse (server/src/media/webrtc/input-guard.ts);
 *   and the same for 30 feedbacks each reporting 65,535 lost packets, which the node accepts and reads
 *   as one run each (server/src/media/rtp/twcc-compact.ts) up to the estimator's results;
 * - node: the platform (`rtc serve` from dist/ with the api, token and media roles) with an audio
 *   publisher and a subscriber that sends the datagram over SRTCP at 8 and at 80 a second for
 *   BENCH_RTCP_SECONDS; the node's extra CPU per hostile datagram sent over its CPU without them
 *   (/proc, user + system), its share of a core, and the slowest of the token requests (another
 *   project's) made one after the other meanwhile. A run lasts at least BENCH_RTCP_SECONDS, longer
 *   when a token request is still waiting then.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { RtcpPacketConverter, RtcpTransportLayerFeedback, type RtcpPacket } from 'werift';
import { waitFor } from '../server/src/main/client/media/loopback-peer.ts';
import { RtcClient } from '../server/src/main/client/media/rtc-client.ts';
import type { WireCredentials } from '../server/src/main/client/media/wire-client.ts';
import { feedbackResults } from '../server/src/media/rtp/downlink-estimator.ts';
import { CompactTwcc } from '../server/src/media/rtp/twcc-compact.ts';
import { hostileDatagram, runChunk, twccFeedback } from '../test/helpers/hostile-rtcp.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer, type BenchCredential } from './lib/platform.ts';
import { readCpuSeconds } from './lib/proc-stats.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'rtcp-flood';
const SECONDS = intSetting('BENCH_RTCP_SECONDS', 5, 1, 60);
const RATES = [8, 80] as const;
const DATAGRAM = hostileDatagram();

/** werift's parser as the node had it, taken before the checks are installed in this process. */
const weriftParse = RtcpPacketConverter.deSerialize.bind(RtcpPacketConverter);

/** 30 feedbacks of 40 bytes each reporting 65,535 lost packets: well formed, so accepted and read. */
const LOST_DATAGRAM = Buffer.concat(Array.from({ length: 30 }, () => twccFeedback(65_535, [...Array.from({ length: 8 }, () => runChunk(0, 8191)), runChunk(0, 7)])));

/** CPU microseconds per call of `parse` on the hostile datagram, over at least 200 ms of CPU. */
function cpuPerCall(parse: (data: Buffer) => unknown, datagram = DATAGRAM): number {
  let calls = 0;
  const start = process.cpuUsage();
  let used = 0;
  while (used < 200_000) {
    for (let i = 0; i < 10; i++) parse(datagram);
    calls += 10;
    const now = process.cpuUsage(start);
    used = now.user + now.system;
  }
  return used / calls;
}

async function issue(api: string, cred: BenchCredential, body: Record<string, unknown>): Promise<{ media: WireCredentials; ms: number }> {
  const started = performance.now();
  const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify(body), { authorization: basicAuthorization(cred.appId, cred.appSecret) });
  if (res.status !== 200) throw new Error(`token request: ${res.status} ${res.text}`);
  return { ...(JSON.parse(res.text) as { media: WireCredentials }), ms: performance.now() - started };
}

/** Raw bytes werift's DTLS transport encrypts as one SRTCP datagram. */
function raw(bytes: Buffer): RtcpPacket {
  return { serialize: () => bytes } as unknown as RtcpPacket;
}

async function main(): Promise<void> {
  const { parseCheckedRtcp } = await import('../server/src/media/webrtc/input-guard.ts');
  const before = cpuPerCall(weriftParse);
  const after = cpuPerCall(parseCheckedRtcp);
  printFigure({ bench: BENCH, figure: 'parse_cpu_per_datagram', value: after, unit: 'us', baseline: before, baseline_is: 'werift 0.23.0 unchecked' });
  // the lost runs, parsed and turned into the estimator's results (one per run)
  const readLost = (data: Buffer): number => parseCheckedRtcp(data).reduce((n, p) => n + (
    p.type === RtcpTransportLayerFeedback.type && p.feedback instanceof CompactTwcc ? feedbackResults(p.feedback).length : 0), 0);
  if (readLost(LOST_DATAGRAM) !== 30) throw new Error('the lost-run datagram was not read as 30 runs');
  printFigure({ bench: BENCH, figure: 'lost_runs_cpu_per_datagram', value: cpuPerCall(readLost, LOST_DATAGRAM), unit: 'us',
    baseline: cpuPerCall(weriftParse, LOST_DATAGRAM), baseline_is: 'werift 0.23.0 unchecked' });

  const work = mkdtempSync(join(tmpdir(), 'bench-rtcp-'));
  const started: ServerProcess[] = [];
  const clients: RtcClient[] = [];
  try {
    const platform = await startPlatformServer({
      dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
      env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' },
    });
    started.push(platform);
    const api = platform.urls['api']!;
    const media = platform.urls['media']!;
    const cred = await createCredential(api);
    const other = await createCredential(api);
    const pub = await RtcClient.join(media, await issue(api, cred, { room_id: 'flood', user_id: 'pub', role: 'speaker', publish_streams: [1] }), { keepPayloads: false });
    clients.push(pub);
    await pub.publish(1, 'audio');
    await pub.negotiate([{ streamId: 1, kind: 'audio', direction: 'send' }]);
    const sub = await RtcClient.join(media, await issue(api, cred, { room_id: 'flood', user_id: 'sub', role: 'audience', subscribe_room: true }), { keepPayloads: false });
    clients.push(sub);
    await sub.negotiate([{ streamId: 1, kind: 'audio', direction: 'recv' }]);
    await Promise.all([pub.waitConnected(), sub.waitConnected()]);
    const audio = setInterval(() => pub.sendRtp(1, Buffer.alloc(160)), 20);
    try {
      await waitFor(() => sub.receivedCount(1) >= 10, 'audio at the subscriber');
      const transport = sub.pc.dtlsTransports[0]!;
      /** The node's CPU seconds over SECONDS with `rate` hostile datagrams a second, and the slowest token request meanwhile. */
      const run = async (rate: number): Promise<{ cpu: number; wall: number; sent: number; slowestMs: number }> => {
        const cpu0 = readCpuSeconds(platform.pid);
        const wall0 = performance.now();
        const end = Date.now() + SECONDS * 1000;
        let sent = 0;
        const flood = rate === 0 ? undefined : setInterval(() => {
          transport.sendRtcp([raw(DATAGRAM)]).catch(() => undefined);
          sent += 1;
        }, 1000 / rate);
        let slowestMs = 0;
        while (Date.now() < end) {
          const { ms } = await issue(api, other, { room_id: 'elsewhere', user_id: 'b', role: 'speaker' });
          slowestMs = Math.max(slowestMs, ms);
          await delay(100);
        }
        clearInterval(flood);
        return { cpu: readCpuSeconds(platform.pid) - cpu0, wall: (performance.now() - wall0) / 1000, sent, slowestMs };
      };
      const quiet = await run(0);
      progress(`no flood: ${quiet.cpu.toFixed(2)} CPU s in ${SECONDS} s`);
      for (const rate of RATES) {
        const flooded = await run(rate);
        // a node that cannot keep up leaves datagrams to the socket's buffer, which drops the rest:
        // its share of a core tells that apart from a cheap datagram
        const perDatagram = ((flooded.cpu - (quiet.cpu / quiet.wall) * flooded.wall) / Math.max(flooded.sent, 1)) * 1e6;
        printFigure({ bench: BENCH, figure: `node_cpu_per_datagram_at_${rate}_per_s`, value: perDatagram, unit: 'us', datagrams: flooded.sent });
        printFigure({ bench: BENCH, figure: `node_cpu_share_at_${rate}_per_s`, value: flooded.cpu / flooded.wall, unit: 'cores', baseline: quiet.cpu / quiet.wall });
        printFigure({ bench: BENCH, figure: `slowest_token_request_at_${rate}_per_s`, value: flooded.slowestMs, unit: 'ms', baseline: quiet.slowestMs });
      }
    } finally {
      clearInterval(audio);
    }
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const s of started) await s.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
