#!/usr/bin/env node
// The `rtc` command: runs the compiled build (npm run build writes dist/).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../dist/server/src/main/cli.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write('rtc: the build is missing; run `npm run build` (or `npm start`) first\n');
  process.exit(1);
}
await import(entry);
