// The `rtc` command's entry point (bin/rtc.mjs runs its build); the command itself is rtc-command.ts.
import { runRtc } from './rtc-command.ts';

void runRtc(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: process.stdin,
  stderrIsTTY: process.stderr.isTTY === true,
  onSignal: (handler) => {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  },
  exit: (code) => process.exit(code),
}).then((code) => {
  if (code >= 0) process.exitCode = code;
});
