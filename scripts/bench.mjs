// npm run bench: installs what the benchmarks need, builds, then runs every bench/*.bench.ts in
// turn. Each module prints one JSON line per figure on standard output; progress goes to
// standard error. `npm run bench -- token` runs only the modules whose name contains "token".
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, build, ensureCommands, ensureNodeModules, run } from './lib.mjs';

ensureNodeModules();
if (!ensureCommands({ wrk: 'wrk' })) process.exit(1);
build();

const filters = process.argv.slice(2);
const modules = readdirSync(join(ROOT, 'bench'))
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort();
if (modules.length === 0) {
  process.stderr.write(`no bench module in bench/ matches ${filters.join(' ') || '*.bench.ts'}\n`);
  process.exit(1);
}

const failed = [];
for (const name of modules) {
  process.stderr.write(`\n== ${name}\n`);
  const status = run(process.execPath, ['--import', 'tsx', join('bench', name)]);
  if (status !== 0) failed.push(name);
}
if (failed.length > 0) {
  process.stderr.write(`\nfailed: ${failed.join(', ')}\n`);
  process.exit(1);
}
