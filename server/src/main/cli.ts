// The `rtc` command's entry point (bin/rtc.mjs runs its build); the command itself is rtc-command.ts.
import { runRtc } from './rtc-command.ts';

void runRtc(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => {
  if (code >= 0) process.exitCode = code;
});
