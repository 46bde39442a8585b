/**
 * The release rules of the SDK packages (docs/sdk/releasing.md): each released package's public API,
 * listed from the declarations it ships, equals its checked-in api-report.md, and a change to that
 * API without a greater version and a CHANGELOG.md entry fails. The failing cases run against a
 * temporary copy of a package with a changed declaration file.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkProblems } from '../../scripts/api-report/check.ts';
import { emitDeclarations, listExports } from '../../scripts/api-report/declarations.ts';
import {
  lockProblems, nextReport, parseReport, readPackage, RELEASED_PACKAGES, releaseProblems, sourceAliases, type LockFile, type PackageState,
} from '../../scripts/api-report/release.ts';
import { ROOT } from '../helpers/root.ts';

const all = RELEASED_PACKAGES.map((dir) => readPackage(ROOT, dir));
const aliases = sourceAliases(all);
/** sdk/server's version, as if its API had just been released at it, and the patch release after it. */
const current = readPackage(ROOT, 'sdk/server').version;
const next = current.replace(/\d+$/, (patch) => String(Number(patch) + 1));
const pattern = (version: string): string => version.replace(/\./g, '\\.');

describe('SDK release rules', () => {
  const temp = mkdtempSync(join(tmpdir(), 'rtc-api-report-'));
  after(() => rmSync(temp, { recursive: true, force: true }));

  it('keeps every released package\'s api-report.md, changelog, version and ranges in step (npm run api-report -- --check)', () => {
    assert.deepEqual(checkProblems(ROOT), []);
  });

  it('lists each export once, sorted, without comments, and another package\'s as a re-export', () => {
    const report = readFileSync(join(ROOT, 'sdk/server/api-report.md'), 'utf8');
    assert.match(report, /^Version: \d+\.\d+\.\d+$/m);
    assert.match(report, /listRooms\(options\?: ListRoomsOptions\): Promise<RoomList>;/);
    assert.match(report, /^export type \{ RoomList \} from '@rtc\/protocol';$/m);
    assert.doesNotMatch(report, /\/\*\*|@example/);
  });

  let emitted: ReturnType<typeof emitDeclarations> | undefined;
  /** A copy of sdk/server's package.json, CHANGELOG.md and api-report.md in its own folder, and its declarations. */
  const copy = (name: string): { dir: string; pkg: () => PackageState; declarations: ReturnType<typeof emitDeclarations> } => {
    const dir = join(temp, name);
    for (const file of ['package.json', 'CHANGELOG.md', 'api-report.md']) cpSync(join(ROOT, 'sdk/server', file), join(dir, 'sdk/server', file));
    // the report as the release of the current version wrote it (a patch release may have left it at an earlier one)
    const reportPath = join(dir, 'sdk/server', 'api-report.md');
    writeFileSync(reportPath, readFileSync(reportPath, 'utf8').replace(/^Version: \S+$/m, `Version: ${current}`));
    emitted ??= emitDeclarations(ROOT, 'sdk/server', aliases);
    return { dir, pkg: () => readPackage(dir, 'sdk/server'), declarations: emitted };
  };
  /** The declarations with one more method on TokenClient, as a change to the sources would give. */
  const widened = (declarations: ReturnType<typeof emitDeclarations>): string => {
    const files = new Map(declarations.files);
    const path = [...files.keys()].find((p) => p.endsWith('sdk/server/src/token-client.d.ts'))!;
    const text = files.get(path)!;
    assert.match(text, /getRoom\(/);
    files.set(path, text.replace(/(\n\s*)getRoom\(/, '$1archiveRoom(roomId: string): Promise<void>;$1getRoom('));
    return listExports(files, declarations.entry).join('\n\n');
  };

  it('fails a changed API without a version bump and changelog entry, and refuses to write its report', () => {
    const { pkg, declarations } = copy('unbumped');
    const surface = widened(declarations);
    const problems = releaseProblems(pkg(), surface, all);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, new RegExp(`the public API differs from sdk/server/api-report\\.md \\(recorded at ${pattern(current)}\\): bump the version`));
    assert.match(problems[0]!, /\+ +archiveRoom\(roomId: string\): Promise<void>;/);
    const next = nextReport(pkg(), surface);
    assert.ok('refused' in next);
    assert.match(next.refused, new RegExp(`changed since ${pattern(current)} and package\\.json still says ${pattern(current)}`));
  });

  it('fails a bump without a changelog entry, and passes once the entry and the new report are there', () => {
    const { dir, pkg, declarations } = copy('bumped');
    const surface = widened(declarations);
    const manifestPath = join(dir, 'sdk/server/package.json');
    writeFileSync(manifestPath, readFileSync(manifestPath, 'utf8').replace(`"version": "${current}"`, `"version": "${next}"`));
    assert.ok(releaseProblems(pkg(), surface, all).some((p) => p.includes(`has no "## ${next}" entry`)));
    const refused = nextReport(pkg(), surface);
    assert.ok('refused' in refused && refused.refused.includes(`no "## ${next}" entry`));
    const changelogPath = join(dir, 'sdk/server/CHANGELOG.md');
    writeFileSync(changelogPath, readFileSync(changelogPath, 'utf8').replace(`## ${current}`, `## ${next} - 2026-11-29\n\n### Added\n- \`archiveRoom\`.\n\n## ${current}`));
    const written = nextReport(pkg(), surface);
    assert.ok('text' in written);
    assert.match(written.text, new RegExp(`^Version: ${pattern(next)}$`, 'm'));
    writeFileSync(join(dir, 'sdk/server/api-report.md'), written.text);
    assert.deepEqual(releaseProblems(pkg(), surface, all), []);
    // and the API without the new method no longer matches the report written with it
    assert.deepEqual(releaseProblems(pkg(), listExports(declarations.files, declarations.entry).join('\n\n'), all).length, 1);
  });

  it('fails a dependent whose range does not name its sibling\'s version, and a lockfile that lags', () => {
    const server = all.find((p) => p.dir === 'sdk/server')!;
    const stale: PackageState = { ...server, dependencies: { '@rtc/protocol': '0.1.0' } };
    const protocol = all.find((p) => p.dir === 'protocol')!;
    assert.ok(releaseProblems(stale, parseReport(server.report ?? '')!.surface, all).some((p) => p.includes(`depends on @rtc/protocol@0.1.0, not on its version ${protocol.version}`)));
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as LockFile;
    assert.deepEqual(lockProblems(lock, all), []);
    assert.match(lockProblems(lock, [stale]).join('\n'), /package-lock\.json does not record/);
  });
});

