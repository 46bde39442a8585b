import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenApiError, TokenClient, type TokenResponse } from '../../sdk/server/src/index.ts';

/** The room every user of this example joins. */
export const ROOM_ID = 'quickstart-room';

export interface CustomerServer {
  readonly url: string;
  close(): Promise<void>;
}

export interface CustomerServerOptions {
  /** The token API host. */
  readonly tokenUrl: string;
  readonly appId: string;
  readonly appSecret: string;
  readonly log: (line: string) => void;
}

/** A small JSON request body (at most 4 KiB) as an object; anything else as an empty one. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 4096) throw new Error('body too large');
    chunks.push(chunk);
  }
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/**
 * The customer's own backend, reduced to two endpoints. It is the only place that holds the App
 * Secret, and it decides who joins which room in which role:
 *
 * - `POST /token {"user_id", "stream"}`: issues a token for the room (publish one stream, receive
 *   the whole room) and keeps its revocation handle. A real backend first authenticates its user
 *   with its own session; this example takes the user id as given.
 * - `POST /kick {"user_id"}`: revokes the user's token and stops issuing new ones to that user.
 */
export async function startCustomerServer(options: CustomerServerOptions): Promise<CustomerServer> {
  const tokens = new TokenClient({ baseUrl: options.tokenUrl, appId: options.appId, appSecret: options.appSecret });
  const handles = new Map<string, string>();
  const banned = new Set<string>();

  const server = createServer((req, res) => {
    void (async () => {
      try {
        const body = await readJson(req);
        const userId = typeof body['user_id'] === 'string' ? body['user_id'] : '';
        if (req.method === 'POST' && req.url === '/token') {
          if (banned.has(userId)) return send(res, 403, { error: 'this user was removed from the room' });
          const stream = typeof body['stream'] === 'number' ? body['stream'] : 1;
          const t: TokenResponse = await tokens.issue({
            room_id: ROOM_ID, user_id: userId, role: 'speaker', publish_streams: [stream], subscribe_room: true, ttl_seconds: 600,
          });
          handles.set(userId, t.media.revocation_handle);
          options.log(`issued a token for ${userId} (stream ${stream}, expires at ${new Date(t.expires_at * 1000).toISOString()})`);
          // the app needs the media credentials and the expiry; the revocation handle stays here
          const { grant, key, sfu_host, sfu_port, encryption } = t.media;
          return send(res, 200, { ...t, media: { grant, key, sfu_host, sfu_port, encryption } });
        }
        if (req.method === 'POST' && req.url === '/kick') {
          const handle = handles.get(userId);
          if (handle === undefined) return send(res, 404, { error: 'unknown user' });
          banned.add(userId);
          await tokens.revoke(handle);
          handles.delete(userId);
          options.log(`revoked ${userId}'s token through TokenClient`);
          return send(res, 200, { revoked: true });
        }
        return send(res, 404, { error: 'not found' });
      } catch (err) {
        if (err instanceof TokenApiError) {
          options.log(`token API error ${err.status} ${err.code}`);
          return send(res, 502, { error: err.code });
        }
        options.log(`error: ${(err as Error).message}`);
        return send(res, 500, { error: 'internal error' });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
