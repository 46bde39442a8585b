// The quickstart: the platform, a customer's server using the server SDK, and two apps using the
// app SDK that meet in one room. Run it with `npm run example`.
import WebSocket from 'ws';
import {
  connect, type MediaSession, type MediaSessionEvents, type MediaToken, type WebSocketConstructor,
} from '../../sdk/app/src/index.ts';
import { createCredential } from './console-api.ts';
import { startCustomerServer, type CustomerServer } from './customer-server.ts';
import { startPlatform, type Platform } from './platform.ts';

const FRAMES_EACH = 3;
const STEP_TIMEOUT_MS = 10_000;
const RUN_TIMEOUT_MS = 90_000;

// Node 20 has no global WebSocket: the ws package implements the WHATWG surface the SDK uses
const NodeWebSocket = WebSocket as unknown as WebSocketConstructor;

const say = (who: string, line: string): void => {
  process.stdout.write(`${who}: ${line}\n`);
};

/** Resolves with the first event of `type` that satisfies `accept`; rejects after STEP_TIMEOUT_MS. */
function nextEvent<K extends keyof MediaSessionEvents>(
  session: MediaSession,
  type: K,
  accept: (payload: MediaSessionEvents[K]) => boolean,
  what: string,
): Promise<MediaSessionEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out waiting for ${what}`));
    }, STEP_TIMEOUT_MS);
    const stop = session.on(type, (payload) => {
      if (!accept(payload)) return;
      clearTimeout(timer);
      stop();
      resolve(payload);
    });
  });
}

/** Waits until `session` receives the stream `streamId` of another participant. */
async function streamReady(session: MediaSession, streamId: number, who: string): Promise<void> {
  if (session.streams().some((s) => s.streamId === streamId && s.subscribed)) return;
  await nextEvent(session, 'streamAdded', (s) => s.streamId === streamId && s.subscribed, `${who} to see stream ${streamId}`);
}

/** The app's side: it asks the customer's server, never the platform, for its token. */
function tokenSource(customer: CustomerServer, userId: string, stream: number): () => Promise<MediaToken> {
  return async () => {
    const res = await fetch(`${customer.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: userId, stream }),
    });
    if (!res.ok) throw new Error(`the customer server refused a token (${res.status})`);
    return (await res.json()) as MediaToken;
  };
}

interface App {
  readonly name: string;
  readonly stream: number;
  readonly session: MediaSession;
  readonly received: string[];
}

/** Joins the room as `name`, publishing one data stream, and prints every frame it receives. */
async function startApp(customer: CustomerServer, name: string, stream: number): Promise<App> {
  const getToken = tokenSource(customer, name, stream);
  // secure: false because the platform of this example serves plain ws:// on loopback
  const session = await connect({ getToken, WebSocket: NodeWebSocket, secure: false, reconnect: false });
  say(name, `joined ${session.roomId} as ${session.role} (participant ${session.participantId})`);
  const received: string[] = [];
  session.on('frame', (f) => {
    const text = new TextDecoder().decode(f.payload);
    received.push(text);
    say(name, `received "${text}" on stream ${f.streamId} from ${f.userId}`);
  });
  session.on('participantLeft', (p) => say(name, `${p.userId} left the room`));
  return { name, stream, session, received };
}

async function exchangeFrames(from: App, to: App): Promise<void> {
  const before = to.received.length;
  const arrived = nextEvent(to.session, 'frame', () => to.received.length - before >= FRAMES_EACH, `${to.name} to receive ${from.name}'s frames`);
  const local = await from.session.publish(from.stream, 'data');
  await streamReady(to.session, from.stream, to.name);
  for (let i = 1; i <= FRAMES_EACH; i += 1) {
    const text = `hello from ${from.name} #${i}`;
    await local.send(new TextEncoder().encode(text));
    say(from.name, `sent "${text}"`);
  }
  await arrived;
}

async function run(): Promise<void> {
  let platform: Platform | undefined;
  let customer: CustomerServer | undefined;
  const apps: App[] = [];
  try {
    platform = await startPlatform(['api', 'token', 'media']);
    say('platform', `api ${platform.urls['api']}, token ${platform.urls['token']}, media ${platform.urls['media']}`);

    const credential = await createCredential(platform.urls['api']!);
    say('console', `registered ${credential.email}, project ${credential.projectId}, credential ${credential.appId}`);

    customer = await startCustomerServer({
      tokenUrl: platform.urls['token']!,
      appId: credential.appId,
      appSecret: credential.appSecret,
      log: (line) => say('customer server', line),
    });
    say('customer server', `listening on ${customer.url}; it alone holds the App Secret`);

    const alice = await startApp(customer, 'alice', 1);
    const bob = await startApp(customer, 'bob', 2);
    apps.push(alice, bob);

    await exchangeFrames(alice, bob);
    await exchangeFrames(bob, alice);
    say('example', `alice received ${alice.received.length} frames, bob received ${bob.received.length}`);

    // the customer's server decides bob must go: it revokes his token through the server SDK
    const revoked = nextEvent(bob.session, 'revoked', () => true, 'bob to be cut off');
    const left = nextEvent(alice.session, 'participantLeft', (p) => p.userId === 'bob', 'alice to see bob leave');
    const kickSent = performance.now();
    const kick = await fetch(`${customer.url}/kick`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: 'bob' }),
    });
    if (!kick.ok) throw new Error(`the kick failed with ${kick.status}`);
    const { error } = await revoked;
    const ms = Math.round(performance.now() - kickSent);
    say('bob', `cut off by the media server: ${error.code} (close code ${error.closeCode}), ${ms} ms after the customer server was asked to revoke`);
    await left;

    say('alice', `still ${alice.session.state}: the revocation cut bob only`);
    try {
      await tokenSource(customer, 'bob', 2)();
      throw new Error('bob got a new token after his revocation');
    } catch (err) {
      say('bob', `asks for a new token: ${(err as Error).message}`);
    }
  } finally {
    for (const app of apps) await app.session.close().catch(() => undefined);
    await customer?.close();
    await platform?.stop();
  }
  say('example', 'done: every process stopped');
}

const guard = setTimeout(() => {
  process.stderr.write(`the example did not finish within ${RUN_TIMEOUT_MS / 1000} s\n`);
  process.exit(1);
}, RUN_TIMEOUT_MS);
guard.unref();

run().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`example failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
