// npm run pack:sdk: builds @rtc/protocol, @rtc/server-sdk, @rtc/app-sdk and @rtc/react (each package's prepack)
// and writes their tarballs to dist/packages/, never into the repository's folders. `--json` prints
// npm pack's JSON report instead of the tarballs' paths.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './lib.mjs';

const PACKAGES = ['@rtc/protocol', '@rtc/server-sdk', '@rtc/app-sdk', '@rtc/react'];
const DESTINATION = join(ROOT, 'dist', 'packages');

const json = process.argv.includes('--json');
mkdirSync(DESTINATION, { recursive: true });
const args = ['pack', ...PACKAGES.flatMap((p) => ['-w', p]), '--pack-destination', DESTINATION, '--json'];
// npm's own notices and the builds' output go to standard error; standard output is the report
const result = spawnSync('npm', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
if (result.error) throw result.error;
if (result.status !== 0) {
  process.stderr.write(`${result.stdout}\nnpm ${args.join(' ')} failed with exit code ${result.status}\n`);
  process.exit(result.status ?? 1);
}
if (json) {
  process.stdout.write(result.stdout);
} else {
  for (const entry of JSON.parse(result.stdout)) process.stdout.write(`${relative(process.cwd(), join(DESTINATION, entry.filename))}\n`);
}
