// npm run example:call: installs the dependencies when they are missing, then runs the video call
// example from this repository's sources (no build step).
import { spawn } from 'node:child_process';
import { ROOT, ensureNodeModules } from '../../scripts/lib.mjs';

ensureNodeModules();
const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}/examples/video-call/main.ts`], { cwd: ROOT, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
