/**
 * The reference the token API is compared with: what a LiveKit customer's token endpoint does.
 * A small express app checks an API key and secret from HTTP Basic, builds an `AccessToken` of
 * `livekit-server-sdk` with a room-join grant and the identity of the JSON body, signs it
 * (`await at.toJwt()`) and answers JSON. It is written as LiveKit's own examples write one: no
 * store, rate limiter or access log.
 *
 * Settings come from LIVEKIT_BASELINE_* variables, set by bench/token-issue.bench.ts (the same
 * App ID and secret as the platform's credential, so that one wrk script loads both). Prints
 * `{"role":"livekit","url":...}` on standard output once listening.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { AccessToken } from 'livekit-server-sdk';

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

const clientKey = Buffer.from(setting('LIVEKIT_BASELINE_CLIENT_KEY'));
const clientSecret = Buffer.from(setting('LIVEKIT_BASELINE_CLIENT_SECRET'));
const serverUrl = setting('LIVEKIT_BASELINE_SERVER_URL');
// the LiveKit project's API key and secret, which sign the access tokens
const apiKey = `API${randomBytes(9).toString('base64url')}`;
const apiSecret = randomBytes(32).toString('base64url');

/** The Basic credential of the request matches the configured key and secret (constant time). */
function authorized(header: string | undefined): boolean {
  if (header === undefined || !header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64');
  const colon = decoded.indexOf(0x3a);
  if (colon === -1) return false;
  const key = decoded.subarray(0, colon);
  const secret = decoded.subarray(colon + 1);
  const keyOk = key.length === clientKey.length && timingSafeEqual(key, clientKey);
  const secretOk = secret.length === clientSecret.length && timingSafeEqual(secret, clientSecret);
  return keyOk && secretOk;
}

interface TokenBody {
  room_id?: unknown;
  user_id?: unknown;
  role?: unknown;
  publish_streams?: unknown;
}

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '8kb' }));

app.post('/v1/rtc/tokens', async (req: Request, res: Response) => {
  if (!authorized(req.headers.authorization)) {
    res.status(401).set('www-authenticate', 'Basic realm="rtc"').json({ error: 'invalid_credentials' });
    return;
  }
  const body = (req.body ?? {}) as TokenBody;
  if (typeof body.room_id !== 'string' || typeof body.user_id !== 'string') {
    res.status(400).json({ error: 'invalid_request', message: 'room_id and user_id are required' });
    return;
  }
  const at = new AccessToken(apiKey, apiSecret, { identity: body.user_id, ttl: '10m' });
  at.addGrant({
    roomJoin: true,
    room: body.room_id,
    canPublish: body.role !== 'audience',
    canSubscribe: true,
    canPublishData: true,
  });
  res.set('cache-control', 'no-store').json({ server_url: serverUrl, participant_token: await at.toJwt() });
});

const server = app.listen(Number(process.env['LIVEKIT_BASELINE_PORT'] ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ role: 'livekit', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
