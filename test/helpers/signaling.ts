import assert from 'node:assert/strict';
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

export interface StreamFrame {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** An event stream read over fetch, frame by frame. */
export interface EventStream {
  readonly frames: StreamFrame[];
  /** The first frame (received or to come) that matches; rejects when the stream ends first or after `timeoutMs`. */
  waitFor(match: (f: StreamFrame) => boolean, what: string, timeoutMs?: number): Promise<StreamFrame>;
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens the event stream over plain fetch (no resuming: the test decides where it reopens). */
export async function openEventStream(url: string, token: string, lastEventId?: string): Promise<EventStream> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const abort = new AbortController();
  const res = await fetch(`${url}/v1/signaling/events`, { headers, signal: abort.signal });
  assert.equal(res.status, 200, await (res.status === 200 ? Promise.resolve('') : res.text()));
  const frames: StreamFrame[] = [];
  const waiters = new Set<() => void>();
  let finished = false;
  const ended = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (!block.includes('data: ')) continue;
          const field = (name: string): string | undefined => new RegExp(`^${name}: (.*)$`, 'm').exec(block)?.[1];
          frames.push({ id: field('id'), event: field('event') ?? 'message', data: JSON.parse(field('data')!) as Record<string, unknown> });
        }
        for (const w of [...waiters]) w();
      }
    } catch {
      // aborted by close()
    } finally {
      finished = true;
      for (const w of [...waiters]) w();
    }
  })();
  return {
    frames,
    ended,
    close: () => abort.abort(),
    waitFor(match, what, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(frames)}`));
        }, timeoutMs);
        function check(): void {
          const found = frames.find(match);
          if (found || finished) {
            clearTimeout(timer);
            waiters.delete(check);
            if (found) resolve(found);
            else reject(new Error(`the stream ended before ${what}; got ${JSON.stringify(frames)}`));
          }
        }
        waiters.add(check);
        check();
      });
    },
  };
}
