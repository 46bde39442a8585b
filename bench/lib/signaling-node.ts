/**
 * A signaling node for the signaling benches (signaling-fanout.bench.ts, signaling-cluster.bench.ts),
 * composed as `rtc serve` composes the role on the SQLite store of `BENCH_DATA_DIR`, with the
 * per-token rate limit lifted and, since every bench client connects from 127.0.0.1, the
 * per-address connection cap too. Its rooms are in Redis when `redisUrl` is given. The server's
 * modules are loaded only here, in the node's own process.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface BenchSignalingOptions {
  /** The cluster's Redis: rooms shared with the other nodes. */
  readonly redisUrl?: string | undefined;
  /**
   * The bench's tokens, written as JSON to `BENCH_TOKENS_FILE` when it is set: `issue` gives a
   * signaling token of one room of one project for a user.
   */
  readonly tokens?: (issue: (user: string) => Promise<string>) => Promise<unknown>;
}

/** Serves the node on a free loopback port, prints its role line, and stops on SIGTERM. */
export async function serveBenchSignaling(options: BenchSignalingOptions): Promise<void> {
  const [{ createMemoryBus }, { loadKeyRing }, { createMemoryLimiter }, { createSqliteStore }, { createLogger },
    { issueToken }, { createSignalingApp }, { createSignalingService }, { defaultSignalingSettings }, { createPasswordHasher },
    { DEFAULT_LISTENER_LIMITS }, { createRedisRoomState }, { fixedKeyRing },
  ] = await Promise.all([
    import('../../server/src/bus/memory.ts'), import('../../server/src/keys/file-keyring.ts'),
    import('../../server/src/limiter/memory.ts'), import('../../server/src/store/sqlite.ts'),
    import('../../server/src/log.ts'), import('../../server/src/tokens/issue.ts'),
    import('../../server/src/signaling/app.ts'), import('../../server/src/signaling/service.ts'),
    import('../../server/src/signaling/settings.ts'), import('../../server/src/core/password.ts'), import('../../server/src/config.ts'),
    import('../../server/src/signaling/redis-rooms.ts'), import('../../server/src/core/keyring.ts'),
  ]);
  const dataDir = process.env['BENCH_DATA_DIR']!;
  const clock = { nowMs: () => Date.now() };
  const logger = createLogger('info');
  const keys = fixedKeyRing(loadKeyRing(dataDir, Math.floor(Date.now() / 1000)));
  const store = createSqliteStore(join(dataDir, 'rtc.sqlite'));
  const deps = { store, limiter: createMemoryLimiter(), bus: createMemoryBus(() => undefined), clock, keys,
    passwords: createPasswordHasher(), events: { record: async () => {} } };
  const settings = { ...defaultSignalingSettings('rtc-platform'), rateLimit: { max: 1_000_000_000, windowSec: 1 } };
  const rooms = options.redisUrl
    ? createRedisRoomState({ target: options.redisUrl, settings, clock, onError: (err) => logger.warn({ err }, 'Redis failed') })
    : undefined;
  await rooms?.ready();
  const listener = { ...DEFAULT_LISTENER_LIMITS.signaling, maxConnectionsPerAddress: 1_000_000 };
  const { app } = createSignalingApp(createSignalingService(deps, settings, { rooms }), { logger, listener });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const tokensFile = process.env['BENCH_TOKENS_FILE'];
  if (tokensFile && options.tokens) {
    // one project for the whole room
    const projectId = `prj_${randomBytes(16).toString('base64url')}`;
    const issue = async (user: string): Promise<string> => (await issueToken(deps, { issuer: 'rtc-platform', sfuHost: 'localhost', sfuPort: 7880, signalingUrl: url }, {
      projectId, appId: 'app_bench', publisher: true, subscriber: true, maxTtlSeconds: 3600,
    }, { room_id: 'bench-room', user_id: user, role: 'participant', signaling: true, ttl_seconds: 3600 })).signaling!.token;
    writeFileSync(tokensFile, JSON.stringify(await options.tokens(issue)));
  }
  process.stdout.write(`${JSON.stringify({ role: 'signaling', url })}\n`);
  process.on('SIGTERM', () => {
    rooms?.close();
    void app.close().finally(() => process.exit(0));
  });
}
