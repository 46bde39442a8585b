import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageSurface } from './declarations.ts';
import { lockProblems, readPackage, releaseProblems, RELEASED_PACKAGES, sourceAliases } from './release.ts';

/**
 * What `npm run api-report -- --check` reports for the repository at `root`: a stale api-report.md,
 * a broken release rule, a lockfile out of step (`only`: just these package folders' reports).
 */
export function checkProblems(root: string, only: readonly string[] = []): string[] {
  const all = RELEASED_PACKAGES.map((dir) => readPackage(root, dir));
  const aliases = sourceAliases(all);
  const problems = lockProblems(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')), all);
  for (const pkg of all.filter((p) => only.length === 0 || only.includes(p.dir))) {
    problems.push(...releaseProblems(pkg, packageSurface(root, pkg.dir, aliases), all));
  }
  return problems;
}
