// npm start: installs, builds and starts every role on the embedded default (SQLite, in-process
// limiter and bus), then prints where each role listens and how to get a first credential.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT, banner, buildIfStale, ensureNodeModules, forwardSignals, serveEnvironment } from './lib.mjs';

ensureNodeModules();
buildIfStale();

const child = spawn(process.execPath, [`${ROOT}/bin/rtc.mjs`, 'serve'], {
  cwd: ROOT, env: serveEnvironment(process.env), stdio: ['ignore', 'pipe', 'inherit'],
});
// npm sends its signal here; the server stops with it, and this process exits with the server
forwardSignals(child);
const urls = {};
const roles = (process.env.RTC_ROLES ?? 'api,token,signaling,media').split(',').map((r) => r.trim()).filter(Boolean);
let hinted = false;
createInterface({ input: child.stdout }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  try {
    const { role, url } = JSON.parse(line);
    if (role && url) urls[role] = url;
  } catch { /* a plain line */ }
  if (!hinted && roles.every((r) => urls[r])) {
    hinted = true;
    process.stdout.write(banner(urls, process.env.RTC_DATA_DIR ?? './data'));
  }
});
