import { createServer, connect, type Server, type Socket } from 'node:net';
import type { TokenRequest, TokenResponse } from '@rtc/protocol';
import { SignalingClient, type SignalingClientOptions, type SignalingEvent } from '../../sdk/app/src/signaling.ts';
import type { Customer } from './customer.ts';
import { request } from './http.ts';

/** Issues a token with `signaling: true` (and whatever else `body` asks) through the token API. */
export async function issueSignalingToken(
  tokenUrl: string, customer: Customer, body: Partial<TokenRequest> & { room_id: string; user_id: string },
): Promise<TokenResponse & { signaling: { token: string; url: string } }> {
  const res = await request(`${tokenUrl}/v1/rtc/tokens`, {
    headers: { authorization: customer.auth },
    body: { role: 'participant', signaling: true, ...body },
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  const token = res.json<TokenResponse>();
  if (!token.signaling) throw new Error('the token response has no signaling credentials');
  return token as TokenResponse & { signaling: { token: string; url: string } };
}

/** The events one client has received so far, and a way to wait for the next ones. */
export interface Inbox {
  readonly events: SignalingEvent[];
  /** The first event (already received or still to come) that matches; rejects after `timeoutMs`. */
  waitFor(match: (event: SignalingEvent) => boolean, timeoutMs?: number, what?: string): Promise<SignalingEvent>;
  /** Resolves when the iteration ends, with the error it threw, if any. */
  readonly ended: Promise<unknown>;
  messages(): Extract<SignalingEvent, { type: 'message' }>[];
}

/** Iterates `client.events()` in the background, keeping every event. */
export function collect(client: SignalingClient, signal?: AbortSignal): Inbox {
  const events: SignalingEvent[] = [];
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  let finished = false;
  const ended = (async () => {
    try {
      for await (const event of client.events(signal ? { signal } : {})) {
        events.push(event);
        notify();
      }
      return undefined;
    } catch (err) {
      return err;
    } finally {
      finished = true;
      notify();
    }
  })();
  return {
    events,
    ended,
    messages: () => events.filter((e): e is Extract<SignalingEvent, { type: 'message' }> => e.type === 'message'),
    waitFor(match, timeoutMs = 5000, what = 'an event') {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = events.find(match);
          if (found) {
            done();
            resolve(found);
          } else if (finished) {
            done();
            reject(new Error(`the event stream ended before ${what} arrived; got ${JSON.stringify(events)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** A joined SDK client with its token response and its event inbox. */
export interface Participant {
  readonly token: TokenResponse & { signaling: { token: string; url: string } };
  readonly client: SignalingClient;
  readonly inbox: Inbox;
}

/** Issues a token, joins with the app SDK and starts reading the event stream. */
export async function joinRoom(
  tokenUrl: string, customer: Customer, body: Partial<TokenRequest> & { room_id: string; user_id: string },
  options: Partial<SignalingClientOptions> = {},
): Promise<Participant> {
  const token = await issueSignalingToken(tokenUrl, customer, body);
  const client = new SignalingClient({ url: token.signaling.url, token: token.signaling.token, ...options });
  await client.join();
  const inbox = collect(client);
  await inbox.waitFor((e) => e.type === 'ready', 5000, 'the stream to open');
  return { token, client, inbox };
}

/**
 * A TCP relay in front of a server that a test can cut (every open connection reset) and hold
 * closed (new connections refused) to drop streams the way a network does.
 */
export interface CuttableProxy {
  readonly url: string;
  /** Resets every open connection; while `blocked`, new connections are closed at once. */
  cut(options?: { readonly block?: boolean }): void;
  unblock(): void;
  /** Resolves once `count` connections were refused since the last `cut` (rejects after `timeoutMs`). */
  refused(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port, protocol } = new URL(target);
  const sockets = new Set<Socket>();
  let blocked = false;
  let refusedCount = 0;
  const onRefused = new Set<() => void>();
  const server: Server = createServer((inbound) => {
    if (blocked) {
      inbound.resetAndDestroy();
      refusedCount += 1;
      for (const check of onRefused) check();
      return;
    }
    const outbound = connect({ host: hostname, port: Number(port) });
    sockets.add(inbound);
    sockets.add(outbound);
    const drop = (): void => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no address');
  return {
    url: `${protocol}//127.0.0.1:${address.port}`,
    cut(options = {}) {
      if (options.block) blocked = true;
      refusedCount = 0;
      for (const socket of sockets) socket.resetAndDestroy();
      sockets.clear();
    },
    unblock() {
      blocked = false;
    },
    refused(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          onRefused.delete(check);
          reject(new Error(`${refusedCount} of ${count} connections refused within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = (): void => {
          if (refusedCount < count) return;
          clearTimeout(timer);
          onRefused.delete(check);
          resolve();
        };
        onRefused.add(check);
        check();
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
