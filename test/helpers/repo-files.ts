import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.ts';

/** One line of the root .gitignore, as this repository writes them: `dir/`, `*.ext` or a name. */
function ignoreRule(line: string): ((name: string, isDir: boolean) => boolean) | undefined {
  const pattern = line.trim();
  if (pattern === '' || pattern.startsWith('#')) return undefined;
  if (pattern.includes('/') && !pattern.endsWith('/')) throw new Error(`.gitignore: rule ${pattern} needs a path matcher`);
  const dirOnly = pattern.endsWith('/');
  const body = dirOnly ? pattern.slice(0, -1) : pattern;
  if (body.includes('*') && !/^\*[^*?[]+$/.test(body)) throw new Error(`.gitignore: rule ${pattern} needs a glob matcher`);
  const suffix = body.startsWith('*') ? body.slice(1) : undefined;
  return (name, isDir) => (!dirOnly || isDir) && (suffix !== undefined ? name.endsWith(suffix) : name === body);
}

/**
 * The repository's files whose name ends with `suffix`, as paths relative to the root, sorted: what
 * `git ls-files '*<suffix>'` lists in a checkout, read from the tree without git (the root .gitignore's
 * rules, `.git` and empty folders left out).
 */
export function repoFiles(suffix: string, root = ROOT): string[] {
  const rules = readFileSync(join(root, '.gitignore'), 'utf8').split('\n').flatMap((line) => ignoreRule(line) ?? []);
  const found: string[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const isDir = entry.isDirectory();
      if (entry.name === '.git' || rules.some((ignored) => ignored(entry.name, isDir))) continue;
      const path = prefix + entry.name;
      if (isDir) walk(join(dir, entry.name), `${path}/`);
      else if (entry.isFile() && entry.name.endsWith(suffix)) found.push(path);
    }
  };
  walk(root, '');
  return found.sort();
}
