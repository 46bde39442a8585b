// Shared steps of the npm scripts: install what the project needs, on a fresh machine too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
 * tree, tsconfig.json paths map @rtc/protocol to its TypeScript index (tsc and tsx read them); in
 * dist/, node_modules/@rtc/protocol links to dist/protocol/, whose exports name the compiled index.
 * Node resolves a bare import from dist/ through dist/node_modules first.
 */
export function build() {
  must(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json']);
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
    writeFileSync(path, text.replace(/((?:from|import\()\s*)(['"])(\.\.?\/[^'"]+)\.ts\2/g, '$1$2$3.js$2'));
  }
}

export function packageJson() {
  return JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));
}
