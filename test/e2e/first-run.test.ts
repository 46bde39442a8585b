/** The first run, piece by piece: the printed walkthrough, signals through npm start's process, a taken port, shutdown with pipes, TLS paths. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ROOT, startServer, type RunningServer } from '../helpers/platform.ts';
import { createCustomer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { CLI, TOKEN_BODY, runCli, useTempDirs } from './serve-helpers.ts';

const LIB = pathToFileURL(join(ROOT, 'scripts/lib.mjs')).href;
const PORTS_0 = { RTC_API_PORT: '0', RTC_TOKEN_PORT: '0', RTC_SIGNALING_PORT: '0', RTC_MEDIA_PORT: '0' };

/** Every process below `pid` now, by the parent ids in /proc (Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: the command name may hold spaces and parentheses
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // the process ended while the list was read
    }
  }
  const found: number[] = [];
  const walk = (parent: number): void => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** Resolves once every process of the list has ended (reaped, or a zombie), or after 10 s. */
async function gone(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pids.every(exited) && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
}

/** Whether a connection to the URL's port is refused (nothing listens there). */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** Whether the process has ended: gone, or a zombie its parent has not reaped yet. */
function exited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '');
  } catch {
    return true;
  }
}

describe('the banner and walkthrough npm start prints', () => {
  const tempDir = useTempDirs();
  let server: RunningServer;
  before(async () => {
    server = await startServer({ roles: ['api', 'token', 'signaling'] });
  });
  after(async () => {
    await server.stop();
  });

  type Urls = { api: string; token: string; signaling?: string; media?: string };
  const lib = async () => await import(LIB) as {
    walkthrough: (urls: Urls, rtc: string) => string[];
    banner: (urls: Urls, dataDir: string, rtc: string) => string;
  };
  const urlsOf = (s: RunningServer): Urls => ({ api: s.api, token: s.token, signaling: s.urls['signaling'] ?? '' });
  const runScript = (script: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> => new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    child.on('close', (code) => resolve({ code, out }));
  });

  it('works when run twice, as pasted: one project, one platform URL, a grant checked from the token answer', async () => {
    const script = (await lib()).walkthrough(urlsOf(server), `${process.execPath} --import tsx ${CLI}`).join('\n');
    assert.match(script, / --signaling\)/m, 'the walkthrough asks for signaling when the role runs');
    // RTC_URL names the platform once; no command repeats it, nor cuts output with other tools
    assert.equal(script.split(server.api).length - 1, 1, script);
    assert.doesNotMatch(script, /--url|node -pe|\| *cut /, script);
    assert.match(script, /--publish 1\b.*# --publish 1: user-1 may publish stream 1 /m, 'says what --publish 1 grants');
    const env = { PATH: process.env['PATH'] ?? '', HOME: tempDir(), XDG_CONFIG_HOME: tempDir() };
    for (const run of [1, 2]) {
      const res = await runScript(script, env);
      assert.equal(res.code, 0, `run ${run}:\n${res.out}`);
      assert.match(res.out, run === 1 ? /account created; logged in/ : /^logged in/m);
      assert.match(res.out, /^valid rtc-grant\+jwt signed by /m, `run ${run}:\n${res.out}`);
      assert.doesNotMatch(res.out, /undefined/);
    }
    const list = await runScript(`${process.execPath} --import tsx ${CLI} projects list --json`, env);
    const projects = (JSON.parse(list.out) as { projects: { name: string }[] }).projects;
    assert.deepEqual(projects.map((p) => p.name), ['my app'], 'the second run reused the project of the first');
  });

  it('advertises the token endpoint the docs use, and ends with the next steps', async () => {
    const text = (await lib()).banner({ ...urlsOf(server), media: 'ws://127.0.0.1:7880' }, './data', 'rtc');
    const line = /^ {2}token: +(\S+) .*\bPOST (\/[\w/.-]+)/m.exec(text);
    assert.ok(line, text);
    assert.doesNotMatch(text, /POST \/v1\/tokens\b/);
    // the documented body (docs/reference/token-api.md) sent to the advertised endpoint gets a token
    const customer = await createCustomer(server);
    const res = await request(`${line[1]}${line[2]}`, { headers: { authorization: customer.auth }, body: TOKEN_BODY });
    assert.equal(res.status, 200, res.text);
    const next = text.slice(text.lastIndexOf('Next'));
    assert.match(next, new RegExp(`${server.api}/`), 'the console URL');
    assert.match(next, /Test room/);
    assert.match(next, /docs\/console\.md/);
    assert.match(next, /sdk\/app\/README\.md/);
  });
});

describe('rtc serve as npm start runs it', () => {
  const tempDir = useTempDirs();
  it('stops with the process that started it: SIGTERM to the parent ends the server', async () => {
    // the parent is what scripts/start.mjs is: it starts rtc serve and forwards signals to it
    const parent = spawn(process.execPath, ['--input-type=module', '-e', `
      import { spawn } from 'node:child_process';
      import { forwardSignals } from ${JSON.stringify(LIB)};
      const child = spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(CLI)}, 'serve'], { stdio: ['ignore', 'inherit', 'ignore'] });
      process.stdout.write(JSON.stringify({ pid: child.pid }) + '\\n');
      forwardSignals(child);
    `], { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', RTC_ROLES: 'api', RTC_DATA_DIR: tempDir(), ...PORTS_0 }, stdio: ['ignore', 'pipe', 'inherit'] });
    let serverPid = 0;
    const exit = new Promise<number | null>((resolve) => parent.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: parent.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as { pid?: number; role?: string };
        if (parsed.pid) serverPid = parsed.pid;
        if (parsed.role === 'api') resolve();
      });
      parent.on('exit', () => reject(new Error('the parent ended before the server listened')));
    });
    parent.kill('SIGTERM');
    assert.equal(await exit, 0, 'the parent exits with the server\'s code');
    assert.ok(serverPid > 0 && exited(serverPid), 'the server process is gone');
  });

  it('stops with npm: SIGTERM to `npm start` ends the start script and the server, freeing every port', async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'],
      // every role, as a first run starts them, on ports of the system's choosing
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tempDir(), RTC_DATA_DIR: tempDir(), ...PORTS_0 },
    });
    const exit = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    const urls = await new Promise<string[]>((resolve, reject) => {
      const found = new Map<string, string>();
      createInterface({ input: npm.stdout }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const parsed = JSON.parse(line) as { role?: string; url?: string };
        if (parsed.role && parsed.url) found.set(parsed.role, parsed.url);
        if (found.size === 4) resolve([...found.values()]);
      });
      npm.on('exit', () => reject(new Error('npm start ended before the server listened')));
    });
    const tree = descendants(npm.pid!);
    assert.ok(tree.length >= 2, `npm runs the start script and the server: ${tree.join(', ')}`);
    npm.kill('SIGTERM');
    assert.equal(await exit, 0, 'npm exits with the server\'s code');
    // the server closed its listeners before it exited, and the start script waited for it
    for (const url of urls) assert.ok(await refused(url), `nothing listens on ${url} any more`);
    assert.deepEqual(tree.filter((pid) => !exited(pid)), [], 'no process of npm start is left');
  });

  it('stops with npm: SIGTERM to `npm run example:call` ends the example and its platform', async () => {
    const npm = spawn('npm', ['run', 'example:call', '--silent'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tempDir(), CALL_PORT: '0' },
    });
    const exit = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    const page = await new Promise<string>((resolve, reject) => {
      createInterface({ input: npm.stdout }).on('line', (line) => {
        const open = /^call: open (http:\/\/\S+)/.exec(line);
        if (open) resolve(open[1]!);
      });
      npm.on('exit', () => reject(new Error('the example ended before it served its page')));
    });
    const tree = descendants(npm.pid!);
    assert.ok(tree.length >= 3, `npm runs the example, which runs its call server and the platform: ${tree.join(', ')}`);
    npm.kill('SIGTERM');
    assert.equal(await exit, 0);
    assert.ok(await refused(page), 'the call page is no longer served');
    // a helper of the bundler (esbuild's service) ends once its parent's pipe closes: waited for, not slept on
    await gone(tree);
    assert.deepEqual(tree.filter((pid) => !exited(pid)), [], 'no process of the example is left');
  });


  it('names the role and the variable of a port another process holds, and announces no role', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const res = await runCli(['serve'], {
        ...PORTS_0, RTC_HOST: '127.0.0.1', RTC_ROLES: 'token,api', RTC_API_PORT: String(port), RTC_DATA_DIR: tempDir(),
      });
      assert.equal(res.code, 1, res.stderr);
      assert.match(res.stderr, new RegExp(`^rtc: api role: port ${port} is in use; set RTC_API_PORT$`, 'm'));
      assert.equal(res.stdout, '', 'no role line for a start that failed');
      const after = res.stderr.slice(res.stderr.indexOf('is in use'));
      assert.doesNotMatch(after, /listening/i);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('ends on SIGTERM when standard output and error are pipes (spawnSync with a timeout)', () => {
    const started = Date.now();
    const res = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
      cwd: ROOT, timeout: 20_000, killSignal: 'SIGTERM',
      env: { PATH: process.env['PATH'] ?? '', RTC_ROLES: 'api,token', RTC_DATA_DIR: tempDir(), RTC_LOG_LEVEL: 'debug', ...PORTS_0 },
    });
    assert.ok(Date.now() - started < 60_000, 'spawnSync returned');
    assert.match(res.stdout.toString('utf8'), /"role":"token"/, `the server had started:\n${res.stderr.toString('utf8')}`);
    assert.equal(res.signal, null, 'ended by its own handler, not by the signal');
    assert.equal(res.status, 0);
  });

  it('ends on SIGTERM after the reader of its standard error went away', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', RTC_ROLES: 'api', RTC_DATA_DIR: tempDir(), RTC_LOG_LEVEL: 'debug', ...PORTS_0 },
    });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    await new Promise<void>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.includes('"role":"api"')) resolve();
      });
    });
    child.stderr.destroy();
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const result = await exit;
    clearTimeout(kill);
    assert.deepEqual(result, { code: 0, signal: null });
  });

  it('names the TLS file it cannot read', async () => {
    const res = await runCli(['serve'], {
      ...PORTS_0, RTC_DATA_DIR: tempDir(), RTC_TLS_CERT_FILE: '/nonexistent/cert.pem', RTC_TLS_KEY_FILE: '/nonexistent/key.pem',
    });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /RTC_TLS_CERT_FILE: \/nonexistent\/cert\.pem cannot be read: ENOENT/);
    assert.match(res.stderr, /RTC_TLS_KEY_FILE: \/nonexistent\/key\.pem cannot be read: ENOENT/);
  });
});
