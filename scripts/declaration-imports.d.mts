/** `from './x.ts'` and `import('./x.ts')` in a declaration file become `./x.js`. */
export function rewriteDeclarationImports(text: string): string;
