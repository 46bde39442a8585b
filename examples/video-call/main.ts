// A video call between browser tabs: the platform, and a customer's server that serves the call
// page and issues its tokens. Run it with `npm run example:call`, then open the printed address
// in two tabs. Stops on Ctrl-C.
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { TokenApiError, TokenClient } from '../../sdk/server/src/index.ts';
import { createCredential } from '../quickstart/console-api.ts';
import { readJson } from '../quickstart/customer-server.ts';
import { startPlatform } from '../quickstart/platform.ts';

const ROOM_ID = 'video-call';
const PAGE = readFileSync(fileURLToPath(new URL('index.html', import.meta.url)), 'utf8');
// the page's code: the app SDK and @rtc/react, rendered by React (page/app.tsx)
const PAGE_ENTRY = fileURLToPath(new URL('page/app.tsx', import.meta.url));
const USER_ID = /^[A-Za-z0-9_-]{1,32}$/;

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

const platform = await startPlatform(['api', 'token', 'media']);
try {
  const credential = await createCredential(platform.urls['api']!);
  const tokens = new TokenClient({ baseUrl: platform.urls['token']!, appId: credential.appId, appSecret: credential.appSecret });
  const app = (await build({
    entryPoints: [PAGE_ENTRY], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent',
    jsx: 'automatic', minify: true, define: { 'process.env.NODE_ENV': '"production"' },
  })).outputFiles[0]!.text;
  // stream ids are room-wide: each user publishes a microphone and a camera of its own
  const streamsOf = new Map<string, readonly [number, number]>();
  const handles = new Map<string, string>();
  const removed = new Set<string>();

  const server = createServer((req, res) => {
    void (async () => {
      try {
        if (req.method === 'GET' && (req.url === '/' || req.url === '/index.html')) return send(res, 200, 'text/html; charset=utf-8', PAGE);
        if (req.method === 'GET' && req.url === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', app);
        const json = (status: number, body: unknown): void => send(res, status, 'application/json', JSON.stringify(body));
        if (req.method !== 'POST') return json(404, { error: 'not found' });
        const body = await readJson(req);
        const userId = typeof body['user_id'] === 'string' && USER_ID.test(body['user_id']) ? body['user_id'] : undefined;
        if (userId === undefined) return json(400, { error: 'user_id must be 1-32 letters, digits, _ or -' });
        if (req.url === '/token') {
          // a real backend authenticates its user first; this example takes the name as given
          if (removed.has(userId)) return json(403, { error: 'you were removed from this call' });
          const streams = streamsOf.get(userId) ?? [streamsOf.size * 2 + 1, streamsOf.size * 2 + 2] as const;
          streamsOf.set(userId, streams);
          const t = await tokens.issue({
            room_id: ROOM_ID, user_id: userId, role: 'speaker', publish_streams: [...streams], subscribe_room: true, ttl_seconds: 600,
          });
          handles.set(userId, t.media.revocation_handle);
          say(`call server: issued a token for ${userId} (streams ${streams.join(', ')})`);
          const { grant, key, sfu_host, sfu_port, encryption } = t.media;
          return json(200, { ...t, media: { grant, key, sfu_host, sfu_port, encryption } });
        }
        if (req.url === '/kick') {
          const handle = handles.get(userId);
          if (handle === undefined) return json(404, { error: 'unknown user' });
          removed.add(userId);
          await tokens.revoke(handle);
          say(`call server: removed ${userId} (token revoked)`);
          return json(200, { revoked: true });
        }
        return json(404, { error: 'not found' });
      } catch (err) {
        const status = err instanceof TokenApiError ? err.status : 500;
        send(res, status >= 400 ? status : 500, 'application/json', JSON.stringify({ error: err instanceof Error ? err.message : 'failed' }));
      }
    })();
  });
  const port = Number(process.env['CALL_PORT'] ?? '8090');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: listening } = server.address() as AddressInfo;
  say(`platform: api ${platform.urls['api']}, token ${platform.urls['token']}, media ${platform.urls['media']}`);
  say(`call: open http://127.0.0.1:${listening}/ in two browser tabs, pick a name in each and join (Ctrl-C stops)`);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
} finally {
  await platform.stop();
  say('call: stopped');
}
