/**
 * The Overview page's code (docs/console.md, "Overview"): the token request as curl and with the
 * server SDK, and the app that joins with the token. Each runs as pasted against the platform
 * that serves the console: the app connects over wss:// only when the console came over https://
 * (`npm start` serves ws://), and publishes the stream ids the token request grants.
 */

/** The token request the snippets make: room, user and the stream ids the app then publishes. */
export const SNIPPET_TOKEN_REQUEST = {
  room_id: 'my-room', user_id: 'alice', role: 'speaker', publish_streams: [1, 2], subscribe_room: true,
} as const;

export interface Snippets {
  readonly curl: string;
  readonly server: string;
  readonly app: string;
}

/** The snippets for a credential of the platform at `origin` (the console's own `location.origin`). */
export function snippets(origin: string, appId: string): Snippets {
  const secure = origin.startsWith('https:');
  const [audio, video] = SNIPPET_TOKEN_REQUEST.publish_streams;
  return {
    curl: `curl -X POST ${origin}/v1/rtc/tokens \\
  -u "${appId}:$RTC_APP_SECRET" \\
  -H 'content-type: application/json' \\
  -d '${JSON.stringify(SNIPPET_TOKEN_REQUEST)}'`,
    server: `import { TokenClient } from '@rtc/server-sdk';

// on your server: the App Secret comes from your secret store, never from an app
const tokens = new TokenClient({
  baseUrl: '${origin}',
  appId: '${appId}',
  appSecret: process.env.RTC_APP_SECRET,
});

const token = await tokens.issue({
  room_id: 'my-room', user_id: 'alice', role: 'speaker',
  publish_streams: [${audio}, ${video}], subscribe_room: true,
});
// send token (never the App Secret) to your app; each user of a room needs stream ids of its own`,
    app: `import { connect } from '@rtc/app-sdk';

// in your app: getToken asks your server, which asks the token API as above
const getToken = () => fetch('/my-backend/rtc-token').then((r) => r.json());
${secure
    ? '// this platform serves its media over TLS (wss://, the default)\nconst session = await connect({ getToken });'
    : '// secure: false: this platform serves its media without TLS (ws://); leave it out where it has TLS\nconst session = await connect({ getToken, secure: false });'}
session.on('trackSubscribed', (t) => {
  const el = document.body.appendChild(document.createElement(t.kind)); // <audio> or <video>
  el.autoplay = true;
  t.attach(el);
});
const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
// the stream ids the token grants (publish_streams)
await session.publishTrack(media.getAudioTracks()[0], { streamId: ${audio} });
await session.publishTrack(media.getVideoTracks()[0], { streamId: ${video} });`,
  };
}
