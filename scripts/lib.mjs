// Shared steps of the npm scripts: install what the project needs, on a fresh machine too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rewriteDeclarationImports } from './declaration-imports.mjs';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

export function must(command, args, options = {}) {
  const status = run(command, args, options);
  if (status !== 0) {
    process.stderr.write(`\n${command} ${args.join(' ')} failed with exit code ${status}\n`);
    process.exit(status);
  }
}

/** The digest of package-lock.json that node_modules was installed from, kept in node_modules. */
const INSTALL_STAMP = `${ROOT}/node_modules/.rtc-install-stamp`;

function lockDigest() {
  return createHash('sha256').update(readFileSync(`${ROOT}/package-lock.json`)).digest('hex');
}

/** Whether node_modules was installed from the current package-lock.json. */
export function nodeModulesCurrent() {
  if (!existsSync(`${ROOT}/node_modules/.package-lock.json`)) return false;
  if (existsSync(INSTALL_STAMP)) return readFileSync(INSTALL_STAMP, 'utf8').trim() === lockDigest();
  // installed before stamps existed: trust npm's own marker when it is newer than the lockfile
  return statSync(`${ROOT}/node_modules/.package-lock.json`).mtimeMs >= statSync(`${ROOT}/package-lock.json`).mtimeMs;
}

/** npm ci when node_modules does not match package-lock.json; a matching install is left alone. */
/** Where `npm ci`'s own output goes (compiler lines when better-sqlite3 builds from source). */
const INSTALL_LOG = join(ROOT, 'npm-install.log');

export function ensureNodeModules() {
  if (nodeModulesCurrent()) return;
  const started = Date.now();
  process.stdout.write('installing npm dependencies with npm ci: a minute or two, up to five where better-sqlite3 has to be\n'
    + `compiled because no prebuilt binary can be downloaded; its output goes to ${INSTALL_LOG}\n`);
  const log = openSync(INSTALL_LOG, 'w');
  let status;
  try {
    status = run('npm', ['ci', '--no-audit', '--no-fund', '--foreground-scripts'], { stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
  if (status !== 0) {
    const tail = readFileSync(INSTALL_LOG, 'utf8').trimEnd().split('\n').slice(-30).join('\n');
    process.stderr.write(`${tail}\n\nnpm ci failed with exit code ${status}; its whole output is in ${INSTALL_LOG}\n`);
    process.exit(status);
  }
  writeFileSync(INSTALL_STAMP, `${lockDigest()}\n`);
  process.stdout.write(`installed in ${seconds(started)}\n`);
}

function seconds(sinceMs) {
  return `${((Date.now() - sinceMs) / 1000).toFixed(1)} s`;
}

/** Installs Debian packages that provide the named commands, when missing and when root. */
export function ensureCommands(commandsToPackages) {
  const missing = Object.entries(commandsToPackages).filter(([cmd]) => run('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }) !== 0);
  if (missing.length === 0) return true;
  const packages = [...new Set(missing.map(([, pkg]) => pkg))];
  if (process.getuid?.() !== 0) {
    process.stderr.write(`missing commands ${missing.map(([c]) => c).join(', ')}: install the Debian packages ${packages.join(' ')}\n`);
    return false;
  }
  process.stdout.write(`installing ${packages.join(' ')} (apt-get)...\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { env }) !== 0) {
    must('apt-get', ['update', '-qq'], { env });
    must('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { env });
  }
  return true;
}

/** Workspace packages whose sources the build compiles, and the name the code imports them by. */
const BUILT_PACKAGES = [{ name: '@rtc/protocol', dir: 'protocol' }, { name: '@rtc/server-sdk', dir: 'sdk/server' }];

/**
 * Compiles to dist/, then gives the compiled code the same package layout as the sources: in the
 * tree, tsconfig.json paths map @rtc/protocol to its TypeScript index (tsc and tsx read them); in
 * dist/, node_modules/@rtc/protocol links to dist/protocol/, whose exports name the compiled index.
 * Node resolves a bare import from dist/ through dist/node_modules first.
 */
export function build() {
  const started = Date.now();
  process.stdout.write('building dist/ (tsc)...\n');
  must(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json']);
  // the console web page (docs/console.md): Vite bundles it into dist/console, which the api role serves at /
  must(process.execPath, [`${ROOT}/node_modules/vite/bin/vite.js`, 'build', '--config', 'console/vite.config.ts']);
  for (const { name, dir } of BUILT_PACKAGES) {
    const manifest = JSON.parse(readFileSync(`${ROOT}/${dir}/package.json`, 'utf8'));
    // the package's own exports name its dist/ (docs/decisions.md, "Installable SDKs"); here it is compiled to src/
    manifest.exports = { '.': './src/index.js' };
    delete manifest.types;
    delete manifest.scripts;
    delete manifest.files;
    writeFileSync(`${ROOT}/dist/${dir}/package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
    const link = `${ROOT}/dist/node_modules/${name}`;
    mkdirSync(`${link}/..`, { recursive: true });
    rmSync(link, { force: true, recursive: true });
    symlinkSync(`${'../'.repeat(name.split('/').length)}${dir}`, link, 'dir');
  }
  writeFileSync(BUILD_STAMP, `${new Date().toISOString()}\n`);
  process.stdout.write(`built in ${seconds(started)}\n`);
}

/** Written last by build(): dist/ is complete and as new as this file. */
const BUILD_STAMP = `${ROOT}/dist/.build-stamp`;
/** What the build reads: a change to any of them makes dist/ stale. */
const BUILD_INPUTS = ['protocol/src', 'server/src', 'sdk/app/src', 'sdk/server/src', 'sdk/react/src', 'protocol/package.json', 'tsconfig.json',
  'tsconfig.build.json', 'package-lock.json', 'console/src', 'console/index.html', 'console/vite.config.ts'];

function newestMtimeMs(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtimeMs(`${path}/${entry}`));
  return newest;
}

/** Whether dist/ was built after the last change to every build input. */
export function buildCurrent() {
  if (!existsSync(BUILD_STAMP)) return false;
  const built = statSync(BUILD_STAMP).mtimeMs;
  return BUILD_INPUTS.every((input) => newestMtimeMs(`${ROOT}/${input}`) <= built);
}

/** build() unless dist/ is current. */
export function buildIfStale() {
  if (buildCurrent()) return;
  build();
}

/**
 * The first steps after start, as shell lines that work every time they are run, as pasted:
 * `rtc login --register` signs in to an account that exists already, `projects create --reuse`
 * takes the project of that name made by an earlier run, and a failed step prints the API's
 * refusal (an empty variable then stops the next step with a message) rather than going on with
 * `undefined`. Every command talks to the api role, named once in RTC_URL: it serves the customer
 * API, the token API and the keys.
 */
export function walkthrough({ api, signaling }, rtc = `node '${ROOT}bin/rtc.mjs'`) {
  return [
    `rtc() { ${rtc} "$@"; }`,
    `export RTC_URL=${api}   # every rtc command below talks to the platform there`,
    `export RTC_PASSWORD='a long password'   # unset it and rtc login asks without echo`,
    `rtc login --email you@example.com --register   # signs in when the account exists`,
    `eval "$(rtc projects create --name 'my app' --reuse --env)"   # sets RTC_PROJECT; --reuse takes the project of that name if there is one`,
    `eval "$(rtc credentials create --project "$RTC_PROJECT" --env)"   # sets RTC_APP_ID and RTC_APP_SECRET: the API returns the secret only this once`,
    `TOKEN_RESPONSE=$(rtc token create --room room-1 --user user-1 --role speaker --publish 1${signaling ? ' --signaling' : ''})`
      + '   # --publish 1: user-1 may publish stream 1 (one microphone, camera or screen) in room-1; each publisher of a room needs stream ids of its own',
    `echo "$TOKEN_RESPONSE"   # media.grant and media.key go to the app; keep media.revocation_handle`,
    `echo "$TOKEN_RESPONSE" | rtc grant verify --token-response -   # checks media.grant against the platform's published keys`,
    `# cut the user off: rtc token revoke --handle rvk_...   (media.revocation_handle above)`,
  ];
}

/**
 * What `npm start` prints once every role listens: where each role is, the walkthrough, and what
 * to do next.
 */
export function banner(urls, dataDir, rtc) {
  const api = urls.api ?? '$API';
  const consoleUrl = urls.api ? `${urls.api}/` : '(with the api role)';
  return `
The platform is running (data in ${dataDir}). Logs go to standard error.
  api:       ${urls.api ?? '(not started)'}    customer API, token API (POST /v1/rtc/tokens), public API, GET /v1/openapi.json
  token:     ${urls.token ?? '(not started)'}    token API (POST /v1/rtc/tokens), /health, /.well-known/jwks.json
  signaling: ${urls.signaling ?? '(not started)'}    signaling service (signaling.url of token responses)
  media:     ${urls.media ?? '(not started)'}    media server, WebSocket at /v1/media (media.sfu_host/sfu_port${urls.media?.startsWith('ws://') ? '; no TLS: apps pass secure: false' : ''})
  console:   ${consoleUrl}    the web console: sign up, projects, credentials, a test room

Open the console in a browser for a first credential and a test call, or, from another terminal
(works on every run, as pasted), a first credential, a token and its check:
${walkthrough({ api, signaling: urls.signaling }, rtc).map((line) => `  ${line}`).join('\n')}

Next steps:
  - the console at ${consoleUrl}: sign in with the e-mail and password above, open the project
    'my app', then its Test room page for a call from this browser
  - your own app: ${ROOT}sdk/app/README.md (the app SDK) and ${ROOT}docs/sdk/server.md (your server's tokens)
  - everything else: ${ROOT}docs/console.md, ${ROOT}docs/reference/cli.md, ${ROOT}docs/reference/token-api.md

Stop with Ctrl-C (in-flight requests finish first).
`;
}

/**
 * Builds one publishable package (its `npm run build`): ESM JavaScript and declarations in
 * `<dir>/dist`, from `<dir>/tsconfig.build.json`. The sources import each other by `.ts`, which the
 * JavaScript gets rewritten to `.js`; the declarations get the same rewriting here, so that every
 * TypeScript version a consumer may use resolves them.
 */
export function buildPackage(dir) {
  const dist = join(dir, 'dist');
  rmSync(dist, { recursive: true, force: true });
  must(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-p', join(dir, 'tsconfig.build.json')]);
  for (const file of readdirSync(dist, { recursive: true })) {
    if (!String(file).endsWith('.d.ts')) continue;
    const path = join(dist, String(file));
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, rewriteDeclarationImports(text));
  }
}

export function packageJson() {
  return JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));
}

/**
 * What `npm start` adds to the server's NODE_OPTIONS: V8's young generation held at 4 MiB
 * semi-spaces, where it grows to 16 MiB under a token load and takes some 25 MB of resident memory
 * more for no measurable CPU (docs/operations/benchmarks.md, token issuance).
 */
export const SERVE_NODE_OPTIONS = '--max-semi-space-size=4';

/** The environment of the server `npm start` runs: `env` with SERVE_NODE_OPTIONS, unless NODE_OPTIONS already sizes the young generation. */
export function serveEnvironment(env) {
  const own = env.NODE_OPTIONS ?? '';
  if (/--max-semi-space-size\b/.test(own)) return env;
  return { ...env, NODE_OPTIONS: `${SERVE_NODE_OPTIONS} ${own}`.trim() };
}

/**
 * Passes SIGINT, SIGTERM and SIGHUP on to the child and exits with the child's code once it has
 * ended (128 + signal number when a signal ended it), so that stopping this process stops the child.
 */
export function forwardSignals(child) {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1)));
}
