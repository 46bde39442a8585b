import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { ROOT, startServer, type RunningServer } from '../helpers/platform.ts';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.ts';
import { freeTcpPort } from '../helpers/ports.ts';
import { CLI, runBin, runCli, TOKEN_BODY, useTempDirs } from './serve-helpers.ts';

describe('rtc serve: role lines, configuration errors and shutdown', () => {
  const tempDir = useTempDirs();

  it('prints one JSON role line per role on stdout, with the bound port', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '', RTC_DATA_DIR: tempDir(), RTC_ROLES: 'api,token', RTC_API_PORT: '0', RTC_TOKEN_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const stdout: string[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        const lines = createInterface({ input: child.stdout });
        lines.on('line', (line) => {
          stdout.push(line);
          if (stdout.length === 2) resolve();
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code} after ${stdout.length} lines`)));
      });
      const roles = stdout.map((line) => JSON.parse(line) as { role: string; url: string });
      assert.deepEqual(roles.map((r) => r.role).sort(), ['api', 'token']);
      for (const { role, url } of roles) {
        assert.deepEqual(Object.keys(JSON.parse(stdout.find((l) => l.includes(`"${role}"`)) ?? '{}')), ['role', 'url']);
        const { protocol, hostname, port } = new URL(url);
        assert.equal(protocol, 'http:');
        assert.equal(hostname, '127.0.0.1');
        assert.ok(Number(port) > 0, `${role} announced port ${port}`);
        const health = await request(`${url}/health`);
        assert.equal(health.status, 200, health.text);
        assert.deepEqual(health.json(), { status: 'ok' });
      }
      assert.notEqual(roles[0]?.url, roles[1]?.url);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    // nothing but role lines on stdout: logs go to stderr
    assert.equal(stdout.length, 2, stdout.join('\n'));
  });

  // each rule and its message is a row of server/src/config.test.ts; here, what the process does with them
  const badConfigs: [string, Record<string, string>, RegExp[]][] = [
    ['three problems at once', { RTC_API_PORT: 'abc', RTC_TRUST_PROXY: 'nonsense', RTC_TLS_KEY_FILE: '/nonexistent/key.pem' }, [
      /RTC_API_PORT must be an integer from 0 to 65535/, /RTC_TRUST_PROXY: "nonsense" is not an IPv4 or IPv6 CIDR/,
      /RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE must be set together/,
    ]],
  ];
  for (const [what, env, problems] of badConfigs) {
    it(`exits with code 1 listing every problem for ${what}`, async () => {
      const result = await runCli(['serve'], { RTC_DATA_DIR: tempDir(), RTC_ROLES: 'api,token', RTC_TOKEN_PORT: '0', ...env });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '', 'a role line was printed');
      assert.match(result.stderr, /invalid configuration/);
      for (const problem of problems) assert.match(result.stderr, problem);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace was printed');
    });
  }

  it('exits with code 1 naming the role and the variable when a port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const result = await runCli(['serve'], {
        RTC_DATA_DIR: tempDir(), RTC_ROLES: 'api,token', RTC_API_PORT: '0', RTC_TOKEN_PORT: String(port),
      });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`^rtc: token role: port ${port} is in use; set RTC_TOKEN_PORT$`, 'm'));
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace was printed');
    } finally {
      blocker.close();
    }
  });

  it('names every taken port at once, each with its listener and variable, the admin listener\'s too', async () => {
    const blockers = [createServer(), createServer(), createServer(), createServer()];
    const ports: number[] = [];
    for (const blocker of blockers) {
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      ports.push((blocker.address() as AddressInfo).port);
    }
    try {
      const result = await runCli(['serve'], {
        RTC_DATA_DIR: tempDir(), RTC_HOST: '127.0.0.1', RTC_ROLES: 'api,token,signaling,media',
        RTC_API_PORT: String(ports[0]), RTC_TOKEN_PORT: '0', RTC_SIGNALING_PORT: String(ports[1]),
        RTC_MEDIA_PORT: String(ports[2]), RTC_ADMIN_PORT: String(ports[3]),
      });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`^rtc: api role: port ${ports[0]} is in use; set RTC_API_PORT$`, 'm'));
      assert.match(result.stderr, new RegExp(`^rtc: signaling role: port ${ports[1]} is in use; set RTC_SIGNALING_PORT$`, 'm'));
      assert.match(result.stderr, new RegExp(`^rtc: media role: port ${ports[2]} is in use; set RTC_MEDIA_PORT$`, 'm'));
      assert.match(result.stderr, new RegExp(`^rtc: admin listener: port ${ports[3]} is in use; set RTC_ADMIN_PORT$`, 'm'));
      assert.equal(result.stderr.match(/ is in use; /g)?.length, 4, result.stderr);
      assert.equal(result.stdout, '', 'no role line for a start that failed');
    } finally {
      for (const blocker of blockers) blocker.close();
    }
  });


  // every other client command's test runs the command in the test process (runRtc): this is the entry point as installed
  it('bin/rtc.mjs prints the version and ends a client command with its exit code, the password read from standard input', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const printed = await runBin(['--version'], {});
    assert.deepEqual(printed, { code: 0, stdout: `${version}\n`, stderr: '' });
    const port = await freeTcpPort();
    const home = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
    const login = await runBin(['login', '--url', `http://127.0.0.1:${port}`, '--email', 'someone@example.com'], home, 'password\n');
    assert.deepEqual(login, { code: 1, stdout: '', stderr: `rtc: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n` });
  });

  it('refuses `rtc keys rotate` on a data directory without keys (exit code 1)', async () => {
    const dir = tempDir();
    const result = await runCli(['keys', 'rotate'], { RTC_DATA_DIR: dir });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^rtc: keys rotate: no keys\.json in .*`rtc serve` creates the keys on its first start\n$/);
  });

  for (const keepAlive of [false, true]) {
    describe(`graceful shutdown (${keepAlive ? 'keep-alive' : 'one-shot'} client connection)`, () => {
      let server: RunningServer;
      let customer: Customer;
      const agent = keepAlive ? new Agent({ keepAlive: true }) : false;

      before(async () => {
        server = await startServer({ dataDir: tempDir() });
        customer = await createCustomer(server);
      });
      after(async () => {
        await server.stop();
        if (agent) agent.destroy();
      });

      it('finishes a request in flight at SIGTERM (200) and asks the client to close, then exits with code 0', async () => {
        const body = Buffer.from(JSON.stringify(TOKEN_BODY));
        const half = Math.floor(body.length / 2);
        const req = httpRequest(new URL(`${server.token}/v1/rtc/tokens`), {
          method: 'POST',
          agent,
          headers: {
            authorization: customer.auth, 'content-type': 'application/json', 'content-length': String(body.length),
            // the interim 100 response proves the server has read the headers and is handling the request
            expect: '100-continue',
          },
        });
        const response = new Promise<{ status: number; connection: string | undefined; text: string }>((resolve, reject) => {
          req.on('response', (res: IncomingMessage) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({
              status: res.statusCode ?? 0, connection: res.headers.connection, text: Buffer.concat(chunks).toString('utf8'),
            }));
            res.on('error', reject);
          });
          req.on('error', reject);
        });
        await new Promise<void>((resolve) => req.once('continue', () => resolve()));
        req.write(body.subarray(0, half));

        server.process.kill('SIGTERM');
        // wait for the shutdown to begin: the log says so and the listener stops taking connections
        await waitFor(() => server.output().includes('shutting down'));
        await waitFor(async () => (await request(`${server.token}/health`).then(() => false, () => true)));

        req.end(body.subarray(half));
        const res = await response;
        assert.equal(res.status, 200, res.text);
        assert.equal((JSON.parse(res.text) as TokenResponse).project_id, customer.projectId);
        // a keep-alive client must not keep a closing server's connection open
        assert.equal(res.connection, 'close');
        const exit = await server.stop();
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.doesNotMatch(server.output(), /grace period over/);
      });
    });
  }

});

describe('rtc serve with RTC_MEDIA_WORKERS=2 on the embedded default', () => {
  let server: RunningServer;
  let customer: Customer;
  before(async () => {
    server = await startServer({ roles: ['api', 'token', 'media'], env: { RTC_MEDIA_WORKERS: '2', RTC_MEDIA_MAX_SESSIONS: '1', RTC_LOG_LEVEL: 'info', RTC_ADMIN_PORT: '0' } });
    customer = await createCustomer(server);
  });
  after(async () => {
    await server?.stop();
  });
  const mediaPorts = (): number[] => server.output().split('\n').flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as { role?: string; url?: string };
      return parsed.role === 'media' && parsed.url ? [Number(new URL(parsed.url).port)] : [];
    } catch {
      return [];
    }
  });
  const announcedPorts = async (): Promise<number[]> => {
    const res = await request(`${server.api}/v1/public/platform/catalog`);
    const { regions } = res.json<{ regions: { media_hosts: { port: number }[] }[] }>();
    return regions.flatMap((r) => r.media_hosts.map((h) => h.port)).sort();
  };
  const workerPids = (): Map<number, number> => new Map(server.output().split('\n').flatMap((line) => {
    const m = /"worker":(\d+),"workerPid":(\d+),"msg":"media worker started"/.exec(line);
    return m ? [[Number(m[1]), Number(m[2])] as const] : [];
  }));

  it('prints one media line per worker, each on its own port, and both nodes are announced', async () => {
    const ports = mediaPorts();
    assert.equal(ports.length, 2, server.output());
    assert.notEqual(ports[0], ports[1]);
    await waitFor(async () => (await announcedPorts()).length === 2, 30_000);
    assert.deepEqual(await announcedPorts(), [...ports].sort());
    assert.match(server.output(), /"worker":1,.*"msg":"media server listening"/, 'a worker\'s logs carry its index');
  });

  it('sends the tokens of two rooms to two workers when one session fills a node (RTC_MEDIA_MAX_SESSIONS=1)', async () => {
    const placed = [];
    for (const room of ['room-a', 'room-b']) {
      const res = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: { ...TOKEN_BODY, room_id: room } });
      assert.equal(res.status, 200, res.text);
      placed.push(res.json<TokenResponse>().media.sfu_port);
    }
    assert.deepEqual([...placed].sort(), [...mediaPorts()].sort(), 'the second room goes to the worker the first left free');
    const overCapacity = async (): Promise<number | undefined> => {
      const tokenLine = server.output().split('\n').find((line) => line.startsWith('{"role":"token"'));
      const { admin } = JSON.parse(tokenLine ?? '{}') as { admin?: string };
      return sampleValue(parsePrometheusText((await request(`${admin}/metrics`)).text), 'rtc_media_placements_over_capacity_total');
    };
    assert.equal(await overCapacity(), 0);
    const third = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: { ...TOKEN_BODY, room_id: 'room-c' } });
    assert.equal(third.status, 200, 'every worker full: placed anyway');
    assert.equal(await overCapacity(), 1);
  });

  it('starts a killed worker again, which prints its media line and is announced', async () => {
    const pid = workerPids().get(0);
    assert.ok(pid, server.output());
    process.kill(pid, 'SIGKILL');
    await waitFor(() => mediaPorts().length === 3 && workerPids().get(0) !== pid, 60_000);
    assert.match(server.output(), /"worker":0,.*"msg":"media worker exited; starting it again"/);
    const restarted = mediaPorts()[2]!;
    await waitFor(async () => (await announcedPorts()).includes(restarted), 30_000);
  });

  it('drains every worker on SIGTERM and exits 0', async () => {
    const pids = [...workerPids().values()];
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    assert.deepEqual(alive, [], 'no worker outlives rtc serve');
  });
});

/** Polls `check` until it holds; gives up after `boundMs` (10 s unless told: a bound, not a measured time). */
async function waitFor(check: () => boolean | Promise<boolean>, boundMs = 10_000): Promise<void> {
  for (let i = 0; i < boundMs / 50; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not reached');
}
