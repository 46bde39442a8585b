/**
 * Turns a self-contained TypeScript file (node: imports, and the packages named) into plain
 * JavaScript, so that a baseline server runs on bare `node`, without a loader that would add to
 * its memory.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import ts from 'typescript';

/**
 * Writes `<dir>/<name>.mjs` from `source` and returns its path. The bare imports of `packages` are
 * pointed at this checkout's node_modules, so that the file runs from any directory.
 */
export function transpileStandalone(source: string, dir: string, packages: readonly string[] = []): string {
  const output = ts.transpileModule(readFileSync(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: source,
    reportDiagnostics: false,
  });
  const path = join(dir, basename(source).replace(/\.ts$/, '.mjs'));
  let text = output.outputText;
  for (const name of packages) {
    // the import as the source writes it (single quotes), which the transpiler keeps
    const specifier = `from '${name}'`;
    if (!text.includes(specifier)) throw new Error(`${source} does not import '${name}'`);
    text = text.replaceAll(specifier, `from ${JSON.stringify(import.meta.resolve(name))}`);
  }
  writeFileSync(path, text);
  return path;
}
