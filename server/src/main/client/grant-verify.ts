/** `rtc grant verify`: checks a media grant or signaling token against the JWKS a token host publishes. */
import { readFileSync } from 'node:fs';
import { decodeJwsSegment, GRANT_TYPE, jwksKeyLookup, SIGNALING_TOKEN_TYPE, verifyJws } from '@rtc/protocol';
import { baseUrl, JSON_FLAG, parseCommand, positional, print, str, URL_FLAG, type ClientIO } from './common.ts';
import { callApi, CommandError, isRecord, UsageError } from './http.ts';

const AUDIENCE_OF_TYPE: Readonly<Record<string, string>> = { [GRANT_TYPE]: 'rtc-media', [SIGNALING_TOKEN_TYPE]: 'rtc-signaling' };

export interface VerifiedGrant {
  readonly kid: string;
  readonly type: string;
  readonly claims: Record<string, unknown>;
  /** Seconds until `exp`. */
  readonly expiresIn: number;
}

function part(segment: string, what: string): Record<string, unknown> {
  const parsed = decodeJwsSegment(segment);
  if (!parsed) throw new CommandError(`grant verify: the ${what} is not base64url JSON`);
  return parsed;
}

/** Checks structure, key, signature, audience and expiry; throws CommandError naming the first failure. */
export async function verifyGrant(token: string, jwks: unknown, nowSec: number): Promise<VerifiedGrant> {
  const jws = token.trim();
  const parts = jws.split('.');
  if (parts.length !== 3) throw new CommandError('grant verify: not a compact JWS (three dot-separated parts)');
  const [h, p] = parts as [string, string, string];
  const header = part(h, 'header');
  const claims = part(p, 'payload');
  const type = header['typ'];
  if (header['alg'] !== 'EdDSA' || typeof type !== 'string' || !(type in AUDIENCE_OF_TYPE)) {
    throw new CommandError(`grant verify: unexpected header alg=${String(header['alg'])} typ=${String(type)}`);
  }
  const kid = header['kid'];
  const keys = jwksKeyLookup(jwks);
  if (typeof kid !== 'string' || !(await keys(kid))) {
    throw new CommandError(`grant verify: key ${String(kid)} is not published in the JWKS (unknown or retired)`);
  }
  if (!(await verifyJws(jws, keys, type)).ok) throw new CommandError('grant verify: bad signature');
  const audience = AUDIENCE_OF_TYPE[type];
  if (claims['aud'] !== audience) throw new CommandError(`grant verify: audience ${String(claims['aud'])}, expected ${audience}`);
  const exp = claims['exp'];
  if (typeof exp !== 'number') throw new CommandError('grant verify: no exp claim');
  if (exp <= nowSec) throw new CommandError(`grant verify: expired ${nowSec - exp} s ago`);
  return { kid, type, claims, expiresIn: exp - nowSec };
}

/**
 * The media grant of a token response (`rtc token create`'s output, or the JSON of
 * `POST /v1/rtc/tokens`) read from a file, or from standard input for `-`.
 */
function grantOfTokenResponse(source: string): string {
  let text: string;
  try {
    text = readFileSync(source === '-' ? 0 : source, 'utf8');
  } catch (err) {
    throw new CommandError(`grant verify: cannot read ${source === '-' ? 'standard input' : source}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CommandError('grant verify: --token-response takes the JSON of a token response (rtc token create, POST /v1/rtc/tokens)');
  }
  const media = isRecord(body) ? body['media'] : undefined;
  const grant = isRecord(media) ? media['grant'] : undefined;
  if (typeof grant !== 'string') throw new CommandError('grant verify: the token response has no media.grant');
  return grant;
}

/** `rtc grant verify GRANT | --token-response FILE|-` (docs/reference/cli.md, "Tokens, rooms, grants"). */
export async function grant(args: readonly string[], io: ClientIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'verify') throw new UsageError(`grant: unknown subcommand ${JSON.stringify(sub ?? '')} (verify)`);
  const { values, positionals } = parseCommand('grant verify', rest, { ...URL_FLAG, ...JSON_FLAG, 'token-response': { type: 'string' } }, 1);
  const source = str(values, 'token-response');
  if (source !== undefined && positionals.length > 0) throw new UsageError('grant verify: give GRANT or --token-response, not both');
  const jws = source === undefined ? positional('grant verify', positionals, 0, 'GRANT') : grantOfTokenResponse(source);
  const jwks = await callApi(baseUrl('grant verify', values, io), '/.well-known/jwks.json');
  const verified = await verifyGrant(jws, jwks, io.nowSec());
  const c = verified.claims;
  const list = (v: unknown): string => (Array.isArray(v) && v.length > 0 ? v.join(',') : 'none');
  print(io, values['json'] === true, { valid: true, kid: verified.kid, typ: verified.type, expires_in: verified.expiresIn, claims: c }, () => [
    `valid ${verified.type} signed by ${verified.kid}`,
    `lifetime left: ${verified.expiresIn} s (expires ${new Date(Number(c['exp']) * 1000).toISOString()})`,
    `room: ${String(c['room'])}  user: ${String(c['sub'])}  role: ${String(c['role'])}`,
    `publish streams: ${list(c['pub'])}  subscribe: ${c['sub_room'] === true ? 'whole room' : list(c['subs'])}`,
    JSON.stringify(c, null, 2),
  ]);
  return 0;
}
