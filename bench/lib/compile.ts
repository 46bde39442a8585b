/**
 * Turns a self-contained TypeScript file (node: imports only) into plain JavaScript, so that a
 * baseline server runs on bare `node`, without a loader that would add to its memory.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import ts from 'typescript';

/** Writes `<dir>/<name>.mjs` from `source` and returns its path. */
export function transpileStandalone(source: string, dir: string): string {
  const output = ts.transpileModule(readFileSync(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: source,
    reportDiagnostics: false,
  });
  const path = join(dir, basename(source).replace(/\.ts$/, '.mjs'));
  writeFileSync(path, output.outputText);
  return path;
}
