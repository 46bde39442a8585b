import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT, startServer } from '../helpers/platform.ts';

const LIB = pathToFileURL(join(ROOT, 'scripts/lib.mjs')).href;

// docs/operations/benchmarks.md (token issuance): a process loads the drivers and stacks of what it
// runs, not of every deployment. Each package a process loads costs resident memory (ioredis some
// 8 MB of heap, pg 4 MB, werift 12 MB) whether it is used or not.

/** A module hook that prints `loaded-package <name>` on standard error for each npm package the process loads. */
const HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
  const seen = new Set();
  export async function resolve(specifier, context, next) {
    const resolved = await next(specifier, context);
    const name = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)\\\\//.exec(resolved.url)?.[1];
    if (name && !seen.has(name)) {
      seen.add(name);
      process.stderr.write('loaded-package ' + name + '\\\\n');
    }
    return resolved;
  }
\`));
`)}`;

async function packagesLoadedBy(roles: readonly string[]): Promise<Set<string>> {
  const server = await startServer({ roles, nodeArgs: ['--import', HOOK] });
  try {
    // a first request of the role's hottest path, so that what it loads on first use counts too
    const health = await server.request(`${server.urls[roles[0]!]!}/health`, { method: 'GET' });
    assert.ok(health.status === 200 || health.status === 404, `GET /health answered ${health.status}`);
  } finally {
    await server.stop();
  }
  const loaded = [...server.output().matchAll(/^loaded-package (\S+)$/gm)].map((m) => m[1]!);
  assert.ok(loaded.includes('fastify'), `the hook saw no package load:\n${server.output()}`);
  return new Set(loaded);
}

describe('what a process loads at start-up', () => {
  it('the embedded process (every role, SQLite, no Redis) loads neither the Redis nor the PostgreSQL driver', async () => {
    const loaded = await packagesLoadedBy(['api', 'token', 'signaling', 'media']);
    for (const name of ['ioredis', 'rate-limiter-flexible', 'pg']) {
      assert.ok(!loaded.has(name), `${name} was loaded: ${[...loaded].join(', ')}`);
    }
  });

  it('a token-only process loads no WebRTC, WebSocket, Redis, PostgreSQL or static file package', async () => {
    const loaded = await packagesLoadedBy(['token']);
    for (const name of ['werift', 'ws', 'ioredis', 'rate-limiter-flexible', 'pg', '@fastify/static']) {
      assert.ok(!loaded.has(name), `${name} was loaded: ${[...loaded].join(', ')}`);
    }
  });
});

/** The young generation's size (MiB) after a node process with `env` allocated short-lived objects for a while. */
function youngGenerationMiB(env: NodeJS.ProcessEnv): number {
  const script = `
    const v8 = require('node:v8');
    let kept = [];
    for (let i = 0; i < 2e6; i++) { kept.push({ i, s: 'x' + i }); if (kept.length > 100000) kept = []; }
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    process.stdout.write(String(space.space_size / 1048576));`;
  return Number(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }));
}

describe('the server npm start runs', () => {
  it('holds V8\'s young generation small, unless NODE_OPTIONS sizes it', async () => {
    const { serveEnvironment } = await import(LIB) as { serveEnvironment: (env: NodeJS.ProcessEnv) => NodeJS.ProcessEnv };
    const base = { PATH: process.env['PATH'] ?? '' };
    // V8's default grows to two 16 MiB semi-spaces under this allocation rate
    assert.ok(youngGenerationMiB(base) > 16, 'the default young generation did not grow: the check proves nothing');
    assert.ok(youngGenerationMiB(serveEnvironment(base)) <= 8);
    const chosen = serveEnvironment({ ...base, NODE_OPTIONS: '--max-semi-space-size=16 --no-warnings' });
    assert.equal(chosen['NODE_OPTIONS'], '--max-semi-space-size=16 --no-warnings');
    assert.ok(youngGenerationMiB(chosen) > 16);
    assert.match(serveEnvironment({ ...base, NODE_OPTIONS: '--no-warnings' })['NODE_OPTIONS'] ?? '', /--max-semi-space-size=4 --no-warnings/);
  });
});
