import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The layout of server/src (README.md, "Layout"): a module imports only shared folders and modules
// below it, the shared folders import no module, and only the composition folders import the store
// and the composition root. The price list (billing/catalog) is data every module may read.
const ROOT = dirname(fileURLToPath(import.meta.url));
const SHARED = new Set(['core', 'http', 'bus', 'limiter', 'keys', 'redis', 'placement', 'sql', 'config', 'log', 'metrics', 'role', 'billing/catalog']);
const COMPOSITION = new Set(['store', 'main']);

/** The folder a file belongs to: its first folder under server/src, a top-level file by its name (config-rtc.ts, config-workers.ts and config-relay.ts are config's). */
function unitOf(file: string): string {
  const path = relative(ROOT, file).replaceAll('\\', '/');
  if (path.startsWith('billing/catalog/')) return 'billing/catalog';
  if (!path.includes('/')) return path.replace(/\.ts$/, '').replace(/^config-(rtc|workers|relay)$/, 'config');
  return path.slice(0, path.indexOf('/'));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every import between two folders, as `from -> to` with the files that make it. */
function folderImports(): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(ROOT)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gms)) {
      const target = resolve(dirname(file), match[1]!);
      const [from, to] = [unitOf(file), unitOf(target)];
      if (from === to) continue;
      const out = edges.get(from) ?? new Map<string, string[]>();
      edges.set(from, out);
      out.set(to, [...(out.get(to) ?? []), `${relative(ROOT, file)} imports ${relative(ROOT, target)}`]);
    }
  }
  return edges;
}

/** A path of imports that leads from `start` back to it, if any. */
function cycleFrom(edges: Map<string, Map<string, string[]>>, start: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (at: string, path: string[]): string[] | undefined => {
    for (const [next, why] of edges.get(at) ?? []) {
      if (next === start) return [...path, why[0]!];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, why[0]!]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, []);
}

describe('the imports between the folders of server/src', () => {
  const edges = folderImports();

  it('never lead back to the folder they start from', () => {
    for (const folder of edges.keys()) assert.equal(cycleFrom(edges, folder), undefined, `a cycle through ${folder}`);
  });

  it('go from the shared folders to shared folders only', () => {
    for (const [from, out] of edges) {
      if (!SHARED.has(from)) continue;
      for (const [to, why] of out) assert.ok(SHARED.has(to), why.join('; '));
    }
  });

  it('reach the store and the composition root only from the composition', () => {
    for (const [from, out] of edges) {
      if (COMPOSITION.has(from)) continue;
      for (const [to, why] of out) assert.ok(!COMPOSITION.has(to), why.join('; '));
    }
  });
});
