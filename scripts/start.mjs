// npm start: installs, builds and starts every role on the embedded default (SQLite, in-process
// limiter and bus), then prints where each role listens and how to get a first credential.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT, build, ensureNodeModules } from './lib.mjs';

ensureNodeModules();
build();

const child = spawn(process.execPath, [`${ROOT}/bin/rtc.mjs`, 'serve'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
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

A first credential, from another terminal:
  API=${api}; TOKEN=${token}
  ACCESS=$(curl -s $API/v1/auth/register -H 'content-type: application/json' \\
    -d '{"email":"you@example.com","password":"a long password"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
  PROJECT=$(curl -s $API/v1/projects -H "authorization: Bearer $ACCESS" -H 'content-type: application/json' \\
    -d '{"name":"my app"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
  CRED=$(curl -s $API/v1/projects/$PROJECT/credentials -H "authorization: Bearer $ACCESS" \\
    -H 'content-type: application/json' -d '{"scopes":["publisher","subscriber"]}')   # the App Secret is shown once
  APP_ID=$(echo "$CRED" | node -pe 'JSON.parse(require("fs").readFileSync(0)).app_id')
  APP_SECRET=$(echo "$CRED" | node -pe 'JSON.parse(require("fs").readFileSync(0)).app_secret')
  curl -s -u "$APP_ID:$APP_SECRET" $TOKEN/v1/rtc/tokens -H 'content-type: application/json' \\
    -d '{"room_id":"room-1","user_id":"user-1","role":"speaker","publish_streams":[1],"signaling":true}'
  # revoke: curl -s -u "$APP_ID:$APP_SECRET" $TOKEN/v1/rtc/tokens/revoke -H 'content-type: application/json' \\
  #           -d '{"revocation_handle":"rvk_..."}'

Stop with Ctrl-C (in-flight requests finish first).
`);
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
