/**
 * The floor the token API is measured against: a bare `node:http` server that does only the
 * cryptography of one issuance (HTTP Basic check by HMAC of the secret, one Ed25519 signature,
 * the HKDF of the media key, the HMAC of the revocation handle) and answers JSON of the same
 * size as `POST /v1/rtc/tokens`. No framework, store, limiter, validation or logging.
 *
 * Self-contained (node: imports only) so that it runs on bare `node` once transpiled. Settings
 * come from BASELINE_* variables, set by bench/token-issue.bench.ts from a real response.
 * Prints `{"role":"baseline","url":...}` on standard output once listening.
 */
import { createHmac, generateKeyPairSync, hkdfSync, randomBytes, sign, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

const appId = setting('BASELINE_APP_ID');
const projectId = setting('BASELINE_PROJECT_ID');
const issuer = setting('BASELINE_ISSUER');
const sfuHost = setting('BASELINE_SFU_HOST');
const sfuPort = Number(setting('BASELINE_SFU_PORT'));
const signingKid = setting('BASELINE_SIGNING_KID');
const mediaKid = setting('BASELINE_MEDIA_KID');

const { privateKey } = generateKeyPairSync('ed25519');
const secretHashKey = randomBytes(32);
const mediaMaster = randomBytes(32);
const handleKey = randomBytes(32);
const secretHash = createHmac('sha256', secretHashKey).update(setting('BASELINE_APP_SECRET')).digest();
const projectBytes = Buffer.from(projectId.slice('prj_'.length), 'base64url');
const jwsHeader = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'rtc-grant+jwt', kid: signingKid })).toString('base64url');
const mediaKeyInfo = Buffer.from('rtc/media-key/v1');
const UNAUTHORIZED = JSON.stringify({ error: 'invalid_credentials', message: 'invalid App ID or App Secret' });

interface Body {
  room_id?: unknown;
  user_id?: unknown;
  role?: unknown;
  publish_streams?: unknown;
  subscribe_streams?: unknown;
  subscribe_room?: unknown;
}

function authenticated(header: string | undefined): boolean {
  if (header === undefined || !header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return false;
  const presented = createHmac('sha256', secretHashKey).update(decoded.slice(colon + 1)).digest();
  return timingSafeEqual(presented, secretHash) && decoded.slice(0, colon) === appId;
}

function issue(body: Body): string {
  const grantId = randomBytes(16);
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + 600;
  const pub = Array.isArray(body.publish_streams) ? body.publish_streams : [];
  const subs = Array.isArray(body.subscribe_streams) ? body.subscribe_streams : [];
  const subRoom = body.subscribe_room === true;
  const claims = {
    iss: issuer, aud: 'rtc-media', jti: grantId.toString('base64url'), prj: projectId, app: appId,
    room: body.room_id, sub: body.user_id, role: body.role, pub, subs, sub_room: subRoom, iat, exp,
    cnf: { kid: mediaKid },
  };
  const input = `${jwsHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const grant = `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
  const mediaKey = Buffer.from(hkdfSync('sha256', mediaMaster, grantId, mediaKeyInfo, 32));
  const handleBody = Buffer.alloc(37);
  handleBody.writeUInt8(1, 0);
  projectBytes.copy(handleBody, 1);
  grantId.copy(handleBody, 17);
  handleBody.writeUInt32BE(exp, 33);
  const mac = createHmac('sha256', handleKey).update('rtc/revocation-handle/v1').update(handleBody).digest().subarray(0, 16);
  return JSON.stringify({
    project_id: projectId, app_id: appId, room_id: body.room_id, user_id: body.user_id, role: body.role,
    publish_streams: pub, subscribe_streams: subs, subscribe_room: subRoom, issued_at: iat, expires_at: exp,
    media: {
      grant, key: mediaKey.toString('base64url'), sfu_host: sfuHost, sfu_port: sfuPort, encryption: 'aes-256-gcm',
      revocation_handle: `rvk_${Buffer.concat([handleBody, mac]).toString('base64url')}`,
    },
  });
}

function send(res: ServerResponse, status: number, json: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(json),
    ...extra,
  });
  res.end(json);
}

function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  if (req.method !== 'POST' || req.url !== '/v1/rtc/tokens') {
    send(res, 404, '{"error":"not_found","message":"no route"}');
    return;
  }
  if (!authenticated(req.headers.authorization)) {
    send(res, 401, UNAUTHORIZED, { 'www-authenticate': 'Basic realm="rtc"' });
    return;
  }
  let body: Body;
  try {
    body = JSON.parse(raw.toString('utf8')) as Body;
  } catch {
    send(res, 400, '{"error":"invalid_request","message":"the request body is not valid JSON"}');
    return;
  }
  send(res, 200, issue(body));
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => handle(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
});

server.listen(Number(process.env['BASELINE_PORT'] ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ role: 'baseline', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
