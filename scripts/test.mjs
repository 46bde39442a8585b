// npm test: installs what the tests need, then lint, type-check, build and every test.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ROOT, build, ensureCommands, ensureNodeModules, must } from './lib.mjs';

ensureNodeModules();
ensureCommands({
  openssl: 'openssl', turnserver: 'coturn', turnutils_uclient: 'coturn', chromium: 'chromium', 'firefox-esr': 'firefox-esr',
  'redis-server': 'redis-server',
});

must(process.execPath, [`${ROOT}/node_modules/eslint/bin/eslint.js`, '.']);
must(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-p', 'tsconfig.json', '--noEmit']);
build();
// one PostgreSQL (from Debian's binaries) and one Redis serve every test file (scripts/test-servers.mjs)
ensureCommands({ '/usr/lib/postgresql/15/bin/initdb': 'postgresql-15' });

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith('.test.ts')) found.push(relative(ROOT, path));
  }
  return found;
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : ['protocol', 'server', 'sdk', 'test'].flatMap((d) => {
  try { return findTests(join(ROOT, d)); } catch { return []; }
}).sort();

// the whole output for reading, and the failures alone, printed again at the end
const failuresFile = join(ROOT, '.tmp', 'test-failures.txt');
mkdirSync(dirname(failuresFile), { recursive: true });
rmSync(failuresFile, { force: true });
const { startSharedServers } = await import('./test-servers.mjs');
const servers = await startSharedServers();
const child = spawn(process.execPath, [
  '--import', 'tsx', '--test', '--test-concurrency=3', '--test-timeout=300000',
  '--test-reporter=tap', '--test-reporter-destination=stdout',
  '--test-reporter=./scripts/failures-reporter.mjs', `--test-reporter-destination=${failuresFile}`,
  ...files,
], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...servers.env } });
// an interrupted run ends the tests first, then the shared servers
const signalled = (signal) => 128 + constants.signals[signal];
let interrupted;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = signal;
    child.kill(signal);
  });
}
const status = await new Promise((resolve) => {
  child.once('error', (err) => {
    process.stderr.write(`the test runner did not start: ${err.message}\n`);
    resolve(1);
  });
  child.once('exit', (code, signal) => resolve(code ?? (signal ? signalled(signal) : 1)));
});
await servers.stop();
if (status !== 0 && existsSync(failuresFile)) {
  process.stdout.write(`\nFailed or cancelled:\n${readFileSync(failuresFile, 'utf8') || '(none reported: the runner itself failed)\n'}`);
}
process.exit(interrupted ? signalled(interrupted) : status);
