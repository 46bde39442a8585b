// The call page: the app SDK for the call, @rtc/react for what the page shows, rendered by React.
// main.ts bundles it with esbuild and serves it as /app.js.
import { connect, type LocalTrack, type MediaSession, type MediaToken } from '@rtc/app-sdk';
import { AudioRenderer, LeaveButton, MuteButton, ParticipantGrid, useConnectionQuality, useTracks } from '@rtc/react';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';

async function getToken(userId: string): Promise<MediaToken> {
  const res = await fetch('/token', { method: 'POST', body: JSON.stringify({ user_id: userId }) });
  const body = await res.json() as MediaToken & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `token refused (${res.status})`);
  return body;
}

/** Asks this example's server to revoke a user's token: the media server closes that session. */
async function kick(userId: string): Promise<void> {
  await fetch('/kick', { method: 'POST', body: JSON.stringify({ user_id: userId }) });
  document.body.dataset['removeAnsweredAt'] = String(Date.now());
}

/** This tab's own camera, muted. */
function Preview({ stream, userId }: { stream: MediaStream; userId: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.srcObject = stream;
  }, [stream]);
  return (
    <figure className="tile" data-user={`${userId} (you)`}>
      <video ref={ref} autoPlay playsInline muted />
      <figcaption>{userId} (you)</figcaption>
    </figure>
  );
}

interface Call {
  readonly session: MediaSession;
  readonly media: MediaStream;
  readonly userId: string;
  readonly mic: LocalTrack;
  readonly camera: LocalTrack;
}

function App() {
  const [call, setCall] = useState<Call | undefined>(undefined);
  const [joined, setJoined] = useState(false);
  const [status, setStatus] = useState('Open this page in a second tab, pick another name, and join both.');
  const session = call?.session;
  const tracks = useTracks(session);
  const quality = useConnectionQuality(session);
  useEffect(() => {
    if (quality) document.body.dataset['quality'] = quality.quality;
  }, [quality]);

  const join = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const userId = new FormData(event.currentTarget).get('name') as string;
    setJoined(true);
    try {
      setStatus('Joining…');
      const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
      const s = await connect({ token: await getToken(userId), getToken: () => getToken(userId), secure: location.protocol === 'https:' });
      s.on('revoked', () => {
        document.body.dataset['removedAt'] = String(Date.now());
        setStatus('You were removed from the call.');
      });
      s.on('disconnected', (d) => {
        if (d.willReconnect) return;
        media.getTracks().forEach((t) => t.stop());
        setCall(undefined);
        if (d.error.code !== 'revoked' && d.error.code !== 'closed') setStatus(`Disconnected: ${d.error.code}`);
      });
      const mic = await s.publishTrack(media.getAudioTracks()[0]!);
      const camera = await s.publishTrack(media.getVideoTracks()[0]!);
      setCall({ session: s, media, userId, mic, camera });
      setStatus(`In the call as ${userId}.`);
    } catch (err) {
      setStatus(`Could not join: ${err instanceof Error ? err.message : String(err)}`);
      setJoined(false);
    }
  };

  return (
    <>
      <h1>Video call</h1>
      {!joined && (
        <form onSubmit={(e) => void join(e)}>
          <label htmlFor="name">Your name</label>
          <input id="name" name="name" required pattern="[A-Za-z0-9_\-]{1,32}" autoComplete="off" />
          <button type="submit">Join</button>
        </form>
      )}
      {call && (
        <div className="bar">
          <MuteButton track={call.mic} label={(muted) => (muted ? 'Unmute microphone' : 'Mute microphone')} />
          <MuteButton track={call.camera} label={(muted) => (muted ? 'Turn camera on' : 'Turn camera off')} />
          <LeaveButton session={call.session} onLeave={() => setStatus('You left the call.')} />
        </div>
      )}
      <p id="status" role="status">{status}</p>
      <ParticipantGrid session={session} className="tiles" tileClassName="tile" actions={(p) => (
        <button type="button" aria-label={`Remove ${p.userId} from the call`} onClick={() => void kick(p.userId)}>Remove</button>
      )}>
        {call && <Preview stream={call.media} userId={call.userId} />}
      </ParticipantGrid>
      <AudioRenderer tracks={tracks} />
    </>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
