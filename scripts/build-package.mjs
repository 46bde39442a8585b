// npm run build of a publishable package (protocol/, sdk/*): `node <this> [dir...]` builds each named
// package directory, in order, or the current one; writes <dir>/dist (ESM and .d.ts).
import { resolve } from 'node:path';
import { buildPackage } from './lib.mjs';

const dirs = process.argv.slice(2);
for (const dir of dirs.length > 0 ? dirs : ['.']) buildPackage(resolve(dir));
