// The sources of a package import each other by `.ts`; the declarations it ships must name `.js`,
// which every TypeScript version a consumer may use resolves. Used by the package build
// (scripts/lib.mjs) and the API report (scripts/api-report/declarations.ts).

/** `from './x.ts'` (or `.tsx`) and `import('./x.ts')` in a declaration file become `./x.js`. */
export function rewriteDeclarationImports(text) {
  return text.replace(/((?:from|import\()\s*)(['"])(\.\.?\/[^'"]+)\.tsx?\2/g, '$1$2$3.js$2');
}
