// The servers `npm test` shares between its test files: one PostgreSQL and one Redis for the whole
// run, started with the tests' own helpers (test/helpers/postgres.ts and redis.ts, through tsx).
// Each test file makes its own databases and Redis key prefix on them
// (test/helpers/postgres-databases.ts, test/helpers/redis-keyspace.ts).
import { register } from 'tsx/esm/api';

/**
 * Starts what it can of the two and resolves with the variables that name them to the test files, and
 * `stop()`. A server that cannot start is reported and left out: the files that need it start their own
 * and fail with the reason.
 */
export async function startSharedServers() {
  const unregister = register();
  const [{ startPostgres }, { startRedis }, { SHARED_POSTGRES_ENV }, { SHARED_REDIS_ENV }] = await Promise.all([
    import('../test/helpers/postgres.ts'), import('../test/helpers/redis.ts'),
    import('../test/helpers/postgres-databases.ts'), import('../test/helpers/redis-keyspace.ts'),
  ]);
  const [postgres, redis] = await Promise.allSettled([startPostgres(), startRedis()]);
  const env = {};
  const stops = [];
  for (const [name, started, variable, stop] of [
    ['PostgreSQL', postgres, SHARED_POSTGRES_ENV, (s) => s.stop()],
    ['Redis', redis, SHARED_REDIS_ENV, (s) => s.dispose()],
  ]) {
    if (started.status === 'fulfilled') {
      env[variable] = started.value.url;
      stops.push(() => stop(started.value));
    } else {
      process.stderr.write(`the shared ${name} server did not start (each test file that needs it starts its own): ${started.reason?.message ?? started.reason}\n`);
    }
  }
  let stopped;
  return {
    env,
    stop() {
      stopped ??= Promise.allSettled(stops.map((s) => s())).then(() => unregister());
      return stopped;
    },
  };
}
