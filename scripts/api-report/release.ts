// The release rules of the workspace packages (docs/sdk/releasing.md): each listed package keeps
// a CHANGELOG.md and an api-report.md of its public API; a change to that API needs a version
// greater than the one the report was written at, and a changelog entry for it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The packages that are released: a package joins by being listed here (its folder). */
export const RELEASED_PACKAGES: readonly string[] = ['protocol', 'sdk/app', 'sdk/server', 'sdk/react'];

export const REPORT_FILE = 'api-report.md';
export const CHANGELOG_FILE = 'CHANGELOG.md';

/** What the rules read of one package folder. */
export interface PackageState {
  readonly dir: string;
  readonly name: string;
  readonly version: string;
  readonly dependencies: Readonly<Record<string, string>>;
  readonly changelog: string | undefined;
  readonly report: string | undefined;
}

function readOptional(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** Reads `<root>/<dir>`: package.json, CHANGELOG.md and api-report.md. */
export function readPackage(root: string, dir: string): PackageState {
  const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
    name: string; version: string; dependencies?: Record<string, string>;
  };
  return {
    dir, name: manifest.name, version: manifest.version, dependencies: manifest.dependencies ?? {},
    changelog: readOptional(join(root, dir, CHANGELOG_FILE)), report: readOptional(join(root, dir, REPORT_FILE)),
  };
}

/** The source index each released package is imported through, by name. */
export function sourceAliases(packages: readonly PackageState[]): Record<string, string> {
  return Object.fromEntries(packages.map((p) => [p.name, `${p.dir}/src/index.ts`]));
}

const FENCE = '```';

/** The report file: the package, the version its API was recorded at, and the listing. */
export function renderReport(name: string, version: string, surface: string): string {
  return [
    `# Public API of ${name}`,
    '',
    `Version: ${version}`,
    '',
    'Written by `npm run api-report` from the declarations the package ships; do not edit it by hand. A change to',
    'this listing needs a greater version in package.json and an entry in CHANGELOG.md (docs/sdk/releasing.md).',
    '',
    `${FENCE}ts`,
    surface,
    FENCE,
    '',
  ].join('\n');
}

/** The version and listing of a report file, or undefined when it is not one. */
export function parseReport(text: string): { version: string; surface: string } | undefined {
  const version = /^Version: (\S+)$/m.exec(text)?.[1];
  const start = text.indexOf(`${FENCE}ts\n`);
  const end = text.lastIndexOf(`\n${FENCE}`);
  if (version === undefined || start < 0 || end <= start) return undefined;
  return { version, surface: text.slice(start + FENCE.length + 3, end) };
}

/** Compares two `major.minor.patch` versions (a pre-release such as `-rc.1` sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number[], string] => {
    const [core = '', pre = ''] = v.split('-', 2);
    return [core.split('.').map(Number), pre];
  };
  const [ca, pa] = parse(a);
  const [cb, pb] = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (ca[i] ?? 0) - (cb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (pa === pb) return 0;
  if (pa === '') return 1;
  if (pb === '') return -1;
  return pa < pb ? -1 : 1;
}

/** Whether the changelog has a `## <version>` heading (optionally `## [<version>]`, with a date after it). */
export function changelogHas(changelog: string | undefined, version: string): boolean {
  if (changelog === undefined) return false;
  const escaped = version.replace(/[.+]/g, '\\$&');
  return new RegExp(`^## \\[?${escaped}\\]?(?:\\s|$)`, 'm').test(changelog);
}

/** Lines of `before` and `after` that the other lacks, for a message: `-` removed, `+` added. */
export function changedLines(before: string, after: string, max = 30): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const inA = new Set(a);
  const inB = new Set(b);
  const lines = [...a.filter((l) => !inB.has(l)).map((l) => `- ${l}`), ...b.filter((l) => !inA.has(l)).map((l) => `+ ${l}`)];
  return lines.length > max ? [...lines.slice(0, max), `... and ${lines.length - max} more`] : lines;
}

const HOW = 'bump the version in package.json (semver; on 0.x a breaking change bumps the minor), add a CHANGELOG.md entry '
  + 'for it, then run npm run api-report (docs/sdk/releasing.md)';

/**
 * What breaks the release rules for `pkg`, whose public API is now `surface`; `all` are every
 * released package (for the ranges a package gives its siblings). No problem: an empty list.
 */
export function releaseProblems(pkg: PackageState, surface: string, all: readonly PackageState[]): string[] {
  const problems: string[] = [];
  const where = (file: string): string => `${pkg.dir}/${file}`;
  if (!changelogHas(pkg.changelog, pkg.version)) problems.push(`${pkg.name}: ${where(CHANGELOG_FILE)} has no "## ${pkg.version}" entry for the version in package.json`);
  const report = pkg.report === undefined ? undefined : parseReport(pkg.report);
  if (report === undefined) {
    problems.push(`${pkg.name}: ${where(REPORT_FILE)} is missing or not a report: ${HOW}`);
  } else {
    if (report.surface !== surface) {
      problems.push(`${pkg.name}: the public API differs from ${where(REPORT_FILE)} (recorded at ${report.version}): ${HOW}\n`
        + changedLines(report.surface, surface).map((l) => `    ${l}`).join('\n'));
    }
    if (compareVersions(pkg.version, report.version) < 0) {
      problems.push(`${pkg.name}: package.json's version ${pkg.version} is lower than ${report.version}, at which ${where(REPORT_FILE)} was recorded`);
    }
  }
  for (const dep of all) {
    const range = pkg.dependencies[dep.name];
    if (range !== undefined && range !== dep.version && range !== `^${dep.version}`) {
      problems.push(`${pkg.name}: depends on ${dep.name}@${range}, not on its version ${dep.version}: set "${dep.name}": "${dep.version}" in ${where('package.json')}`);
    }
  }
  return problems;
}

/**
 * The new report for `pkg`, or why it cannot be written: a changed API at the version of the
 * current report, or a version without a changelog entry.
 */
export function nextReport(pkg: PackageState, surface: string): { text: string } | { refused: string } {
  const report = pkg.report === undefined ? undefined : parseReport(pkg.report);
  if (report !== undefined && report.surface !== surface && compareVersions(pkg.version, report.version) <= 0) {
    return { refused: `${pkg.name}: the public API changed since ${report.version} and package.json still says ${pkg.version}: ${HOW}` };
  }
  if (!changelogHas(pkg.changelog, pkg.version)) {
    return { refused: `${pkg.name}: ${pkg.dir}/${CHANGELOG_FILE} has no "## ${pkg.version}" entry: write what changed first` };
  }
  const version = report !== undefined && report.surface === surface ? report.version : pkg.version;
  return { text: renderReport(pkg.name, version, surface) };
}

/** A package-lock.json's `packages` entries, as far as the rules read them. */
export interface LockFile {
  readonly packages: Readonly<Record<string, { readonly version?: string; readonly dependencies?: Readonly<Record<string, string>> }>>;
}

/** Where package-lock.json's workspace entries disagree with the packages' version or ranges (`npm ci` would refuse). */
export function lockProblems(lock: LockFile, all: readonly PackageState[]): string[] {
  const problems: string[] = [];
  for (const pkg of all) {
    const entry = lock.packages[pkg.dir];
    const same = entry !== undefined && entry.version === pkg.version
      && JSON.stringify(entry.dependencies ?? {}) === JSON.stringify(pkg.dependencies);
    if (!same) problems.push(`${pkg.name}: package-lock.json does not record version ${pkg.version} and the dependencies of ${pkg.dir}/package.json: run npm install`);
  }
  return problems;
}
