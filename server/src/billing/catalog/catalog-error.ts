/** A catalog data file that breaks its schema or its coherence rules; the process must not start. */
export class CatalogError extends Error {
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    super(`invalid catalog data in ${file}:\n  ${problems.join('\n  ')}`);
    this.name = 'CatalogError';
    this.problems = problems;
  }
}

/** Every schema issue of a data file as `path: message` lines. */
export function issueLines(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] {
  return issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
}

/** Values that occur more than once, in order of their second occurrence. */
export function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated: string[] = [];
  for (const value of values) {
    if (seen.has(value) && !repeated.includes(value)) repeated.push(value);
    seen.add(value);
  }
  return repeated;
}
