/**
 * The SDKs as a customer gets them: `npm pack` of @rtc/protocol, @rtc/server-sdk and @rtc/app-sdk,
 * installed offline into a fresh project outside the repository, then used from a Node script, from
 * a page bundled with esbuild in Chromium, and from TypeScript against their declarations.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { ROOT } from '../helpers/platform.ts';
import { TokenIssuer, join as joinNode, startMediaServer, text } from './media-helpers.ts';
import type { RunningServer } from '../helpers/platform.ts';

const CHROMIUM = '/usr/bin/chromium';
const PACKAGES = ['@rtc/protocol', '@rtc/server-sdk', '@rtc/app-sdk'] as const;
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment without what `npm test` exports to its scripts (npm_config_*, npm_package_*, ...), so that npm in the fresh project sees only its own. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.toLowerCase().startsWith('npm_')) env[key] = value;
  return { ...env, npm_config_update_notifier: 'false' };
}

/** Runs a command to its end (npm, tsc): the output is kept for the assertion message. */
function runSync(command: string, args: readonly string[], cwd: string): Run {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: cleanEnv() });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function mustRun(command: string, args: readonly string[], cwd: string): string {
  const result = runSync(command, args, cwd);
  assert.equal(result.status, 0, `${command} ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Runs a Node script of the fresh project (plain Node: no tsx, no repository paths) and resolves with its output. */
function runNode(script: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd, env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

interface PackEntry {
  readonly name: string;
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

/** What the Node script of the fresh project does with the installed packages, as a customer would. */
const NODE_SCRIPT = `import WebSocket from 'ws';
import { TokenClient } from '@rtc/server-sdk';
import { connect } from '@rtc/app-sdk';

const tokens = new TokenClient({ baseUrl: process.env.RTC_TOKEN_URL, appId: process.env.RTC_APP_ID, appSecret: process.env.RTC_APP_SECRET });
const issue = (user_id, extra) => tokens.issue({ room_id: 'packaged-node', user_id, subscribe_room: true, ...extra });
const options = { WebSocket, secure: false, reconnect: false };
const alice = await connect({ token: await issue('alice', { role: 'speaker', publish_streams: [1] }), ...options });
const bob = await connect({ token: await issue('bob', { role: 'audience' }), ...options });
const subscribed = new Promise((resolve) => {
  const check = () => { if (bob.streams().some((s) => s.streamId === 1 && s.subscribed)) resolve(); };
  bob.on('streamAdded', check);
  bob.on('streamUpdated', check);
});
const received = new Promise((resolve) => bob.on('frame', resolve));
const mic = await alice.publish(1, 'audio');
await subscribed;
await mic.send(new TextEncoder().encode('hello from the tarball'));
const frame = await received;
console.log(JSON.stringify({ userId: frame.userId, streamId: frame.streamId, kind: frame.kind, text: new TextDecoder().decode(frame.payload) }));
await alice.close();
await bob.close();
`;

/** A TypeScript consumer of the three packages; tsc checks it against the installed declarations. */
const CONSUMER_TS = `import { TokenApiError, TokenClient, type TokenResponse } from '@rtc/server-sdk';
import { connect, MediaError, type MediaSession, type ReceivedFrame, type WebSocketConstructor } from '@rtc/app-sdk';
import { MEDIA_PATH, ROLES, type Role, type TokenRequest } from '@rtc/protocol';

export async function speak(WebSocket: WebSocketConstructor, appSecret: string): Promise<MediaSession> {
  const tokens = new TokenClient({ baseUrl: 'https://token.example.com', appId: 'app', appSecret });
  const request: TokenRequest = { room_id: 'r', user_id: 'u', role: 'speaker', publish_streams: [1] };
  let token: TokenResponse;
  try {
    token = await tokens.issue(request);
  } catch (e) {
    if (e instanceof TokenApiError) throw new Error(\`\${e.code} \${e.status}\`);
    throw e;
  }
  const session = await connect({ token, WebSocket, secure: false });
  session.on('frame', (f: ReceivedFrame) => console.log(f.streamId, f.payload.byteLength));
  session.on('revoked', (e) => console.log(e.error instanceof MediaError, e.error.code));
  const mic = await session.publish(1, 'audio');
  await mic.send(new Uint8Array([1, 2, 3]));
  return session;
}

export const roles: readonly Role[] = ROLES;
export const path: string = MEDIA_PATH;
// @ts-expect-error the declarations know the roles
export const wrong: TokenRequest = { room_id: 'r', user_id: 'u', role: 'owner' };
`;

const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: [],
    strict: true, noEmit: true, skipLibCheck: false,
  },
  files: ['consumer.ts'],
};

/** The page's entry: the customer's code importing the app SDK by its package name. */
const PAGE_ENTRY = `import { connect } from '@rtc/app-sdk';

globalThis.rtcPage = {
  frames: [],
  session: undefined,
  async join(token) {
    this.session = await connect({ token, secure: false, reconnect: false });
    this.session.on('frame', (f) => this.frames.push(\`\${f.userId}:\${f.streamId}:\${new TextDecoder().decode(f.payload)}\`));
    return this.session.state;
  },
  subscribed(streamId) {
    return this.session.streams().some((s) => s.streamId === streamId && s.subscribed);
  },
};
`;

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>rtc app sdk package</title></head>
<body><script type="module" src="./app.js"></script></body></html>
`;

/** What the bundled page keeps on `globalThis.rtcPage`. */
interface PageApi {
  readonly frames: string[];
  join(token: unknown): Promise<string>;
  subscribed(streamId: number): boolean;
}

/** The .tgz files in the repository root and the packages' folders (npm pack without a destination writes there). */
function tarballsInRepository(): string[] {
  return ['.', 'protocol', 'sdk/app', 'sdk/server'].flatMap((dir) =>
    readdirSync(join(ROOT, dir)).filter((name) => name.endsWith('.tgz')).map((name) => join(dir, name))).sort();
}

describe('SDK packages: npm pack tarballs installed in a fresh project outside the repository', () => {
  let work: string;
  let project: string;
  let packed: PackEntry[] = [];
  let tarballsBefore: string[] = [];
  let server: RunningServer | undefined;
  let issuer: TokenIssuer;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'rtc-sdk-packages-'));
    const tarballs = join(work, 'tarballs');
    project = join(work, 'app');
    mkdirSync(tarballs);
    mkdirSync(project);
    tarballsBefore = tarballsInRepository();
    // prepack builds each package's dist/ (the SDKs build the protocol first)
    const packArgs = ['pack', ...PACKAGES.flatMap((p) => ['-w', p]), '--pack-destination', tarballs, '--json'];
    packed = JSON.parse(mustRun('npm', packArgs, ROOT)) as PackEntry[];
    // the app SDK takes its WebSocket class as an option; in Node 20 the customer installs ws, here from this repository
    const ws = JSON.parse(mustRun('npm', ['pack', realpathSync(join(ROOT, 'node_modules/ws')), '--pack-destination', tarballs, '--json'], work)) as PackEntry[];
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }, null, 2)}\n`);
    const files = [...packed, ...ws].map((p) => join(tarballs, p.filename));
    mustRun('npm', ['install', '--offline', '--no-audit', '--no-fund', ...files], project);

    server = await startMediaServer();
    const running = server;
    issuer = await TokenIssuer.create(() => running.api);
  });

  after(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('writes the tarballs where it is told, none into the repository', () => {
    assert.deepEqual(tarballsInRepository(), tarballsBefore);
  });

  it('packs dist/ (ESM and declarations), README.md and package.json only, with exports naming dist/', () => {
    assert.deepEqual(packed.map((p) => p.name).sort(), [...PACKAGES].sort());
    for (const p of packed) {
      const paths = p.files.map((f) => f.path);
      assert.ok(paths.includes('dist/index.js') && paths.includes('dist/index.d.ts') && paths.includes('README.md'), `${p.name}: ${paths.join(', ')}`);
      assert.deepEqual(paths.filter((f) => !(f.startsWith('dist/') || f === 'README.md' || f === 'package.json')), [], p.name);
      assert.deepEqual(paths.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), [], `${p.name} ships no TypeScript sources`);
      assert.deepEqual(paths.filter((f) => f.includes('.test.')), [], `${p.name} ships no tests`);
      const manifest = JSON.parse(readFileSync(join(project, 'node_modules', p.name, 'package.json'), 'utf8')) as Record<string, unknown>;
      assert.deepEqual(manifest['exports'], { '.': { types: './dist/index.d.ts', import: './dist/index.js' } });
      assert.equal(manifest['type'], 'module');
      if (p.name !== '@rtc/protocol') assert.deepEqual(manifest['dependencies'], { '@rtc/protocol': manifest['version'] });
    }
    const readme = readFileSync(join(project, 'node_modules/@rtc/server-sdk/README.md'), 'utf8');
    assert.match(readme, /npm install @rtc\/server-sdk/);
  });

  it('resolves the packages inside the fresh project, not in the repository', () => {
    const out = mustRun(process.execPath, ['--input-type=module', '-e',
      "for (const p of ['@rtc/protocol', '@rtc/server-sdk', '@rtc/app-sdk']) console.log(import.meta.resolve(p));"], project);
    const resolved = out.trim().split('\n');
    assert.equal(resolved.length, 3);
    for (const url of resolved) {
      const path = realpathSync(new URL(url));
      assert.ok(!relative(realpathSync(project), path).startsWith('..'), `${path} is outside the fresh project`);
      assert.match(path, /\/dist\/index\.js$/);
    }
  });

  it('type-checks a TypeScript consumer against the installed declarations', () => {
    writeFileSync(join(project, 'consumer.ts'), CONSUMER_TS);
    writeFileSync(join(project, 'tsconfig.json'), `${JSON.stringify(CONSUMER_TSCONFIG, null, 2)}\n`);
    const result = runSync(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
    assert.equal(result.status, 0, `tsc:\n${result.stdout}${result.stderr}`);
  });

  it('Node: issues tokens with @rtc/server-sdk and exchanges a frame through @rtc/app-sdk over ws', async () => {
    writeFileSync(join(project, 'node-client.mjs'), NODE_SCRIPT);
    const result = await runNode('node-client.mjs', project, {
      RTC_TOKEN_URL: server!.token, RTC_APP_ID: issuer.customer.appId, RTC_APP_SECRET: issuer.customer.appSecret,
    });
    assert.equal(result.status, 0, `node-client.mjs:\n${result.stdout}${result.stderr}`);
    assert.deepEqual(JSON.parse(result.stdout.trim()), { userId: 'alice', streamId: 1, kind: 'audio', text: 'hello from the tarball' });
  });

  describe('browser: a page bundling @rtc/app-sdk with esbuild, in Chromium', () => {
    let site: Server | undefined;
    let browser: Browser | undefined;
    const sessions: MediaSession[] = [];

    after(async () => {
      for (const s of sessions) await s.close();
      await browser?.close();
      if (site) {
        const closing = site;
        closing.closeAllConnections();
        await new Promise<void>((resolve) => closing.close(() => resolve()));
      }
    });

    it('joins the room with a token and receives a frame from a Node participant', async () => {
      writeFileSync(join(project, 'page.js'), PAGE_ENTRY);
      const bundled = await build({
        absWorkingDir: project, entryPoints: ['page.js'], outfile: 'public/app.js', bundle: true, format: 'esm',
        platform: 'browser', target: 'es2022', logLevel: 'silent', metafile: true,
      });
      const inputs = Object.keys(bundled.metafile.inputs);
      assert.ok(inputs.some((i) => i.startsWith('node_modules/@rtc/app-sdk/dist/')), inputs.join(', '));
      assert.ok(inputs.some((i) => i.startsWith('node_modules/@rtc/protocol/dist/')), inputs.join(', '));
      assert.deepEqual(inputs.filter((i) => i !== 'page.js' && !i.startsWith('node_modules/@rtc/')), [], 'the bundle holds the page and the packages only');
      const bundle = readFileSync(join(project, 'public/app.js'));

      site = createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
        if (path === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
        else if (path === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
        else res.writeHead(404).end();
      });
      const listening = site;
      await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
      const address = listening.address();
      if (typeof address !== 'object' || address === null) throw new Error('page server not listening');

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
          '--disable-component-update', '--disable-sync'],
      });
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${address.port}/`);
      await page.waitForFunction(() => (globalThis as unknown as { rtcPage?: unknown }).rtcPage !== undefined);

      const room = 'packaged-browser';
      const pageToken = await issuer.issue({ room_id: room, user_id: 'page-user', role: 'audience', subscribe_room: true });
      const state = await page.evaluate((token) => (globalThis as unknown as { rtcPage: PageApi }).rtcPage.join(token), pageToken);
      assert.equal(state, 'connected');

      const node = await joinNode(await issuer.issue({ room_id: room, user_id: 'node-user', role: 'speaker', publish_streams: [2] }), { reconnect: false });
      sessions.push(node);
      const stream = await node.publish(2, 'video');
      await page.waitForFunction(() => (globalThis as unknown as { rtcPage: PageApi }).rtcPage.subscribed(2), undefined, { timeout: 5000 });
      await stream.send(text('hello, page'));
      await page.waitForFunction(() => (globalThis as unknown as { rtcPage: PageApi }).rtcPage.frames.length === 1, undefined, { timeout: 5000 });
      assert.deepEqual(await page.evaluate(() => (globalThis as unknown as { rtcPage: PageApi }).rtcPage.frames), ['node-user:2:hello, page']);
    });
  });
});
