// Shared steps of the npm scripts: install what the project needs, on a fresh machine too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

/** npm ci when node_modules is missing or older than the lockfile. */
export function ensureNodeModules() {
  const marker = `${ROOT}/node_modules/.package-lock.json`;
  const lock = `${ROOT}/package-lock.json`;
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  process.stdout.write('installing npm dependencies (npm ci)...\n');
  must('npm', ['ci', '--no-audit', '--no-fund']);
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
const BUILT_PACKAGES = [{ name: '@rtc/protocol', dir: 'protocol' }];

/**
 * Compiles to dist/, then gives the compiled code the same package layout as the sources: in the
 * tree, node_modules/@rtc/protocol links to protocol/, whose exports name its TypeScript index; in
 * dist/, node_modules/@rtc/protocol links to dist/protocol/, whose exports name the compiled index.
 * Node resolves a bare import from dist/ through dist/node_modules first.
 */
export function build() {
  must(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json']);
  for (const { name, dir } of BUILT_PACKAGES) {
    const manifest = JSON.parse(readFileSync(`${ROOT}/${dir}/package.json`, 'utf8'));
    manifest.exports = JSON.parse(JSON.stringify(manifest.exports).replace(/\.ts"/g, '.js"'));
    writeFileSync(`${ROOT}/dist/${dir}/package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
    const link = `${ROOT}/dist/node_modules/${name}`;
    mkdirSync(`${link}/..`, { recursive: true });
    rmSync(link, { force: true, recursive: true });
    symlinkSync(`${'../'.repeat(name.split('/').length)}${dir}`, link, 'dir');
  }
}

export function packageJson() {
  return JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));
}
