/**
 * The SDKs as a customer gets them: `npm run pack:sdk` packs @rtc/protocol, @rtc/server-sdk,
 * @rtc/app-sdk and @rtc/react into dist/packages/; the tarballs are checked as npm would publish them, installed
 * offline into a fresh project outside the repository, then used from a Node script, from a page
 * bundled with esbuild in Chromium, and from TypeScript against their declarations.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { ROOT } from '../helpers/platform.ts';
import { TokenIssuer, join as joinNode, text } from '../helpers/media-session.ts';
import { startMediaServer } from './media-server.ts';
import type { RunningServer } from '../helpers/platform.ts';

const CHROMIUM = '/usr/bin/chromium';
const PACKAGES = ['@rtc/protocol', '@rtc/server-sdk', '@rtc/app-sdk', '@rtc/react'] as const;
/** Each package's folder in the repository. */
const PACKAGE_DIRS: Readonly<Record<string, string>> = {
  '@rtc/protocol': 'protocol', '@rtc/server-sdk': 'sdk/server', '@rtc/app-sdk': 'sdk/app', '@rtc/react': 'sdk/react',
};
/** The workspace packages each one depends on, at its own version. */
const DEPENDS_ON: Readonly<Record<string, readonly string[]>> = {
  '@rtc/protocol': [], '@rtc/server-sdk': ['@rtc/protocol'], '@rtc/app-sdk': ['@rtc/protocol'], '@rtc/react': ['@rtc/app-sdk'],
};
/**
 * What the customer installs beside the packages, packed from this repository's node_modules so
 * that the fresh project installs offline: ws (Node 20 has no WebSocket), and React with its
 * declarations for @rtc/react (react is its peer dependency).
 */
const BESIDE = ['ws', 'react', '@types/react', 'csstype'] as const;
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

/** A TypeScript consumer of the four packages; tsc checks it against the installed declarations. */
const CONSUMER_TS = `import { createElement, type ReactElement } from 'react';
import { TokenApiError, TokenClient, type TokenResponse } from '@rtc/server-sdk';
import { connect, MediaError, type MediaSession, type ReceivedFrame, type WebSocketConstructor } from '@rtc/app-sdk';
import { MEDIA_PATH, ROLES, type Role, type TokenRequest } from '@rtc/protocol';
import { AudioRenderer, LeaveButton, ParticipantGrid, VideoTile, useParticipants, useSession, useTracks, type SessionView } from '@rtc/react';

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

export function Grid({ session }: { session: MediaSession }): ReactElement {
  const people = useParticipants(session);
  const videos = useTracks(session, (t) => t.kind === 'video');
  const view: SessionView = useSession(session);
  return createElement('div', { title: \`\${view.state} \${people.length}\` }, ...videos.map((t) => createElement(VideoTile, { key: t.streamId, track: t, label: t.userId })),
    createElement(ParticipantGrid, { session }), createElement(AudioRenderer, { tracks: videos }), createElement(LeaveButton, { session }));
}

export const roles: readonly Role[] = ROLES;
export const path: string = MEDIA_PATH;
// @ts-expect-error the declarations know the roles
export const wrong: TokenRequest = { room_id: 'r', user_id: 'u', role: 'owner' };
`;

/** The consumer's tsconfig.json for one module resolution: what a Node project and a bundled one use. */
function consumerTsconfig(module: string, moduleResolution: string): object {
  return {
    compilerOptions: {
      target: 'ES2022', module, moduleResolution, lib: ['ES2023', 'DOM'], types: [],
      strict: true, noEmit: true, skipLibCheck: false,
    },
    files: ['consumer.ts'],
  };
}

/** The module settings a customer's project may use; each must type-check the consumer. */
const RESOLUTIONS = [['NodeNext', 'NodeNext'], ['Node16', 'Node16'], ['ESNext', 'Bundler'], ['Preserve', 'Bundler']] as const;

/** An address nothing listens on: `npm publish --dry-run` must need no registry. */
const NO_REGISTRY = 'http://127.0.0.1:9/';

/** Where `npm run pack:sdk` writes the tarballs (ignored by git with the rest of dist/). */
const PACKED = join(ROOT, 'dist/packages');

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
  return ['.', 'protocol', 'sdk/app', 'sdk/server', 'sdk/react'].flatMap((dir) =>
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
    // the documented command; prepack builds each package's dist/ (the SDKs build the protocol first)
    packed = JSON.parse(mustRun('npm', ['run', '--silent', 'pack:sdk', '--', '--json'], ROOT)) as PackEntry[];
    const beside = BESIDE.flatMap((name) =>
      JSON.parse(mustRun('npm', ['pack', realpathSync(join(ROOT, 'node_modules', name)), '--pack-destination', tarballs, '--json'], work)) as PackEntry[]);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }, null, 2)}\n`);
    const files = [...packed.map((p) => join(PACKED, p.filename)), ...beside.map((p) => join(tarballs, p.filename))];
    mustRun('npm', ['install', '--offline', '--no-audit', '--no-fund', ...files], project);

    server = await startMediaServer();
    const running = server;
    issuer = await TokenIssuer.create(() => running.api);
  });

  after(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('writes the tarballs to dist/packages/, none into the repository root or the packages', () => {
    assert.deepEqual(tarballsInRepository(), tarballsBefore);
    for (const p of packed) assert.ok(existsSync(join(PACKED, p.filename)), `${p.filename} in dist/packages/`);
    const ignored = runSync('git', ['check-ignore', '-q', join(PACKED, packed[0]!.filename)], ROOT);
    assert.equal(ignored.status, 0, 'git ignores dist/packages/');
  });

  it('packs dist/ (ESM and declarations), README.md, CHANGELOG.md, LICENSE and package.json only, with exports naming dist/', () => {
    assert.deepEqual(packed.map((p) => p.name).sort(), [...PACKAGES].sort());
    for (const p of packed) {
      const paths = p.files.map((f) => f.path);
      for (const required of ['dist/index.js', 'dist/index.d.ts', 'README.md', 'CHANGELOG.md', 'LICENSE', 'package.json']) {
        assert.ok(paths.includes(required), `${p.name} ships ${required}: ${paths.join(', ')}`);
      }
      assert.deepEqual(paths.filter((f) => !(f.startsWith('dist/') || ['README.md', 'CHANGELOG.md', 'LICENSE', 'package.json'].includes(f))), [], p.name);
      assert.deepEqual(paths.filter((f) => !/\.(js|d\.ts|json|md)$/.test(f) && f !== 'LICENSE'), [], `${p.name} ships no tarballs, maps or other files`);
      assert.deepEqual(paths.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), [], `${p.name} ships no TypeScript sources`);
      assert.deepEqual(paths.filter((f) => f.includes('.test.')), [], `${p.name} ships no tests`);
    }
    const readme = readFileSync(join(project, 'node_modules/@rtc/server-sdk/README.md'), 'utf8');
    assert.match(readme, /npm install @rtc\/server-sdk/);
    assert.match(readme, /npm run pack:sdk/);
  });

  it('has manifests ready to publish: public, licensed, ESM exports, engines, dependencies by version', () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    const manifestOf = (name: string): Record<string, unknown> =>
      JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const p of packed) {
      const manifest = manifestOf(p.name);
      assert.equal(manifest['private'], undefined, p.name);
      assert.equal(manifest['license'], 'MIT', p.name);
      assert.match(readFileSync(join(project, 'node_modules', p.name, 'LICENSE'), 'utf8'), /^MIT License/, p.name);
      assert.deepEqual(manifest['repository'], { ...(root['repository'] as object), directory: PACKAGE_DIRS[p.name] }, p.name);
      assert.equal(manifest['homepage'], root['homepage'], p.name);
      assert.deepEqual(manifest['bugs'], root['bugs'], p.name);
      assert.deepEqual(manifest['exports'], {
        '.': { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' },
        './package.json': './package.json',
      }, p.name);
      assert.equal(manifest['types'], './dist/index.d.ts', p.name);
      assert.equal(manifest['type'], 'module', p.name);
      assert.equal(manifest['sideEffects'], false, p.name);
      assert.deepEqual(manifest['files'], ['dist', 'README.md', 'CHANGELOG.md', 'LICENSE'], p.name);
      assert.deepEqual(manifest['engines'], { node: '>=20' }, p.name);
      assert.deepEqual(manifest['publishConfig'], { access: 'public' }, p.name);
      // each sibling at its own packed version, which may differ from this package's (docs/sdk/releasing.md)
      const dependencies = Object.fromEntries((DEPENDS_ON[p.name] ?? []).map((d) => [d, manifestOf(d)['version']]));
      assert.deepEqual(manifest['dependencies'] ?? {}, dependencies, p.name);
      assert.deepEqual(manifest['peerDependencies'], p.name === '@rtc/react' ? { react: '>=18' } : undefined, p.name);
    }
  });

  it('passes npm pkg fix unchanged and npm publish --dry-run without a warning or a registry', () => {
    for (const p of packed) {
      const dir = join(work, 'fix', p.name);
      mkdirSync(dir, { recursive: true });
      const source = join(ROOT, PACKAGE_DIRS[p.name] ?? p.name, 'package.json');
      copyFileSync(source, join(dir, 'package.json'));
      mustRun('npm', ['pkg', 'fix'], dir);
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')), JSON.parse(readFileSync(source, 'utf8')), `npm pkg fix changes ${p.name}`);

      // prepack already ran in pack:sdk; --offline and a token for an address nothing listens on keep npm off any registry
      const host = NO_REGISTRY.replace(/^http:/, '');
      const published = runSync('npm', ['publish', '--dry-run', '--ignore-scripts', '--json', '-w', p.name, '--registry', NO_REGISTRY,
        '--offline', `--${host}:_authToken=dry-run`], ROOT);
      assert.equal(published.status, 0, `npm publish --dry-run ${p.name}:\n${published.stdout}${published.stderr}`);
      const warnings = published.stderr.split('\n').filter((l) => /^npm (warn|error)/i.test(l) && !l.includes('Unknown user config "nodedir"'));
      assert.deepEqual(warnings, [], `npm publish --dry-run ${p.name} warns`);
      const report = JSON.parse(published.stdout) as Record<string, PackEntry>;
      const entry = report[p.name] ?? (report as unknown as PackEntry);
      assert.deepEqual(entry.files.map((f) => f.path).sort(), p.files.map((f) => f.path).sort(), `${p.name} publishes what it packs`);
    }
  });

  it('resolves the packages inside the fresh project, not in the repository', () => {
    const out = mustRun(process.execPath, ['--input-type=module', '-e',
      `for (const p of ${JSON.stringify(PACKAGES)}) console.log(import.meta.resolve(p));`], project);
    const resolved = out.trim().split('\n');
    assert.equal(resolved.length, PACKAGES.length);
    for (const url of resolved) {
      const path = realpathSync(new URL(url));
      assert.ok(!relative(realpathSync(project), path).startsWith('..'), `${path} is outside the fresh project`);
      assert.match(path, /\/dist\/index\.js$/);
    }
  });

  for (const [module, moduleResolution] of RESOLUTIONS) {
    it(`type-checks a TypeScript consumer against the installed declarations (module ${module}, moduleResolution ${moduleResolution})`, () => {
      writeFileSync(join(project, 'consumer.ts'), CONSUMER_TS);
      const config = `tsconfig.${module}.${moduleResolution}.json`.toLowerCase();
      writeFileSync(join(project, config), `${JSON.stringify(consumerTsconfig(module, moduleResolution), null, 2)}\n`);
      const result = runSync(process.execPath, [TSC, '-p', config], project);
      assert.equal(result.status, 0, `tsc (${module}, ${moduleResolution}):\n${result.stdout}${result.stderr}`);
    });
  }

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
