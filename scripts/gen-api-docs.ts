// Writes docs/reference/openapi.json and docs/reference/api.md from the operation records.
//   npx tsx scripts/gen-api-docs.ts          regenerate both files
//   npx tsx scripts/gen-api-docs.ts --check  exit 1 when a committed file differs from a fresh generation
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateReference, REFERENCE_FILES } from './api-docs/reference.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
const fresh = generateReference();
let stale = 0;
for (const key of Object.keys(REFERENCE_FILES) as (keyof typeof REFERENCE_FILES)[]) {
  const path = join(root, REFERENCE_FILES[key]);
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === fresh[key]) continue;
  if (check) {
    stale += 1;
    process.stderr.write(`${REFERENCE_FILES[key]} is out of date: run npx tsx scripts/gen-api-docs.ts\n`);
  } else {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, fresh[key]);
    process.stdout.write(`wrote ${REFERENCE_FILES[key]}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
