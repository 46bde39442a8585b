// The public API reports of the released packages (docs/sdk/releasing.md).
//   npm run api-report                 write each package's api-report.md (refused for a changed API without a version bump and changelog entry)
//   npm run api-report -- --check      exit 1 when a report is stale or a release rule is broken (npm test runs this check)
//   npm run api-report -- sdk/server   only the named package folders
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkProblems } from './api-report/check.ts';
import { packageSurface } from './api-report/declarations.ts';
import { nextReport, readPackage, RELEASED_PACKAGES, REPORT_FILE, sourceAliases } from './api-report/release.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const check = args.includes('--check');
const only = args.filter((a) => !a.startsWith('--'));
const problems: string[] = [];
if (check) {
  problems.push(...checkProblems(root, only));
} else {
  const all = RELEASED_PACKAGES.map((dir) => readPackage(root, dir));
  const aliases = sourceAliases(all);
  for (const pkg of all.filter((p) => only.length === 0 || only.includes(p.dir))) {
    const next = nextReport(pkg, packageSurface(root, pkg.dir, aliases));
    if ('refused' in next) {
      problems.push(next.refused);
    } else if (next.text !== pkg.report) {
      writeFileSync(join(root, pkg.dir, REPORT_FILE), next.text);
      process.stdout.write(`wrote ${pkg.dir}/${REPORT_FILE}\n`);
    }
  }
}
for (const problem of problems) process.stderr.write(`${problem}\n`);
process.exit(problems.length > 0 ? 1 : 0);
