// The public API of a workspace package as a normalized listing: its declarations are emitted in
// memory by the TypeScript compiler (as its build writes them to dist/), then every export of the
// entry's index.d.ts is printed without comments, sorted by name (docs/sdk/releasing.md).
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { rewriteDeclarationImports } from '../declaration-imports.mjs';

/** Declaration files by absolute path, as the build would write them. */
export type Declarations = Map<string, string>;

/** Where the in-memory declarations live: never written to disk. */
const VIRTUAL = '/__api_report__';

/**
 * Emits the declarations of the package in `root/dir` from its sources, with `tsconfig.build.json`'s
 * options; the workspace packages it imports (`aliases`: name to source index) are read from their
 * sources too, so that no package needs a dist/ first. Returns the files and the entry's path.
 */
export function emitDeclarations(root: string, dir: string, aliases: Readonly<Record<string, string>>): { files: Declarations; entry: string } {
  const configPath = join(root, dir, 'tsconfig.build.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); },
  });
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  const paths: Record<string, string[]> = {};
  for (const [name, index] of Object.entries(aliases)) paths[name] = [join(root, index)];
  const options: ts.CompilerOptions = {
    ...parsed.options, noEmit: false, declaration: true, emitDeclarationOnly: true, sourceMap: false, declarationMap: false,
    rootDir: root, outDir: VIRTUAL, paths,
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options });
  // type errors are the type-check's to report; what matters here is the declarations' text
  const files: Declarations = new Map();
  const result = program.emit(undefined, (path, text) => { files.set(resolve(path), rewriteDeclarationImports(text)); }, undefined, true);
  if (result.emitSkipped) throw new Error(`no declarations emitted for ${dir}`);
  return { files, entry: join(VIRTUAL, dir, 'src', 'index.d.ts') };
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** The statement that carries a declaration: a variable's whole `declare const x: T;`. */
function statementOf(decl: ts.Declaration): ts.Node {
  if (ts.isVariableDeclaration(decl) && ts.isVariableDeclarationList(decl.parent)) return decl.parent.parent;
  return decl;
}

/** The module an export or import specifier names, when it is another package (not a relative path). */
function packageOf(decl: ts.Declaration): string | undefined {
  let from: ts.Expression | undefined;
  if (ts.isExportSpecifier(decl)) from = decl.parent.parent.moduleSpecifier;
  else if (ts.isImportSpecifier(decl)) from = decl.parent.parent.parent.moduleSpecifier;
  return from && ts.isStringLiteral(from) && !from.text.startsWith('.') ? from.text : undefined;
}

/** `export { X } from 'pkg'` when the alias chain of an export reaches another package, else undefined. */
function reexportOf(checker: ts.TypeChecker, symbol: ts.Symbol): string | undefined {
  let typeOnly = false;
  for (let current: ts.Symbol | undefined = symbol; current && current.flags & ts.SymbolFlags.Alias;) {
    const decl = current.declarations?.[0];
    if (decl && ts.isExportSpecifier(decl) && (decl.isTypeOnly || decl.parent.parent.isTypeOnly)) typeOnly = true;
    const from = decl ? packageOf(decl) : undefined;
    if (from !== undefined) return `export ${typeOnly ? 'type ' : ''}{ ${symbol.name} } from '${from}';`;
    current = checker.getImmediateAliasedSymbol(current);
  }
  return undefined;
}

/**
 * One block per export of `entry`, sorted by exported name: the declaration as printed by the
 * compiler without comments, or `export { X } from 'pkg'` for what another package declares.
 */
export function listExports(files: Declarations, entry: string): string[] {
  const host = ts.createCompilerHost({ noEmit: true });
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (path) => files.get(resolve(path)) ?? read(path);
  host.fileExists = (path) => files.has(resolve(path)) || exists(path);
  host.directoryExists = (path) => path.startsWith(VIRTUAL) || ts.sys.directoryExists(path);
  host.getSourceFile = (path, language) => {
    const text = host.readFile(path);
    return text === undefined ? undefined : ts.createSourceFile(path, text, language, true);
  };
  const options: ts.CompilerOptions = {
    noEmit: true, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, target: ts.ScriptTarget.ES2022,
    allowImportingTsExtensions: true, skipLibCheck: true, types: [],
  };
  const program = ts.createProgram({ rootNames: [entry], options, host });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  if (!source) throw new Error(`no declarations at ${entry}`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) return [];
  const blocks: string[] = [];
  for (const symbol of [...checker.getExportsOfModule(moduleSymbol)].sort((a, b) => a.name.localeCompare(b.name, 'en'))) {
    const external = reexportOf(checker, symbol);
    if (external !== undefined) {
      blocks.push(external);
      continue;
    }
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const printed = (target.declarations ?? []).map((decl) => {
      const node = statementOf(decl);
      return printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile()).trim();
    });
    const name = target.name === symbol.name ? symbol.name : `${symbol.name} (declared as ${target.name})`;
    blocks.push([`// ${name}`, ...printed].join('\n'));
  }
  return blocks;
}

/** The listing of the package in `root/dir`, from its sources through its emitted declarations. */
export function packageSurface(root: string, dir: string, aliases: Readonly<Record<string, string>>): string {
  const { files, entry } = emitDeclarations(root, dir, aliases);
  return listExports(files, entry).join('\n\n');
}
