// npm start: installs, builds and starts every role on the embedded default (SQLite, in-process
// limiter and bus), then prints where each role listens and how to get a first credential.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT, buildIfStale, ensureNodeModules, forwardSignals, walkthrough } from './lib.mjs';

ensureNodeModules();
buildIfStale();

const child = spawn(process.execPath, [`${ROOT}/bin/rtc.mjs`, 'serve'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
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
    const api = urls.api ?? '$API';
    const token = urls.token ?? api;
    process.stdout.write(`
The platform is running (data in ${process.env.RTC_DATA_DIR ?? './data'}). Logs go to standard error.
  api:       ${urls.api ?? '(not started)'}    customer API, token API, public API, GET /v1/openapi.json
  token:     ${urls.token ?? '(not started)'}    token API, POST /v1/tokens, /health, /.well-known/jwks.json
  signaling: ${urls.signaling ?? '(not started)'}    signaling service (signaling.url of token responses)
  media:     ${urls.media ?? '(not started)'}    media server, WebSocket at /v1/media (media.sfu_host/sfu_port)
  console:   ${urls.api ? `${urls.api}/` : '(with the api role)'}    the web console: sign up, projects, credentials, a test room

Open the console in a browser for a first credential and a test call, or, from another terminal
(works on every run), a first credential, a token and its check:
${walkthrough({ api, token, signaling: urls.signaling }).map((line) => `  ${line}`).join('\n')}

Stop with Ctrl-C (in-flight requests finish first).
`);
  }
});
