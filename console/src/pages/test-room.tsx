import { connect, type MediaSession, type MediaToken, type RemoteParticipant, type RemoteTrack } from '@rtc/app-sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorText, Field, useAction } from '../ui.tsx';

interface Tile {
  readonly participantId: string;
  readonly userId: string;
  readonly stream: MediaStream;
}

function Video({ stream, muted, label }: { stream: MediaStream; muted: boolean; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    if (ref.current && ref.current.srcObject !== stream) ref.current.srcObject = stream;
    void ref.current?.play().catch(() => undefined);
  }, [stream]);
  return <video ref={ref} autoplay playsInline muted={muted} aria-label={label} data-user={label} />;
}

/**
 * Joins a room of the project with a temporary token (no App Secret) and the app SDK: camera and
 * microphone published, every other participant's video and sound, and a button that removes one.
 */
export function TestRoom({ projectId, archived }: { projectId: string; archived: boolean }) {
  const [room, setRoom] = useState('test-room');
  const [user, setUser] = useState(() => `console-${Math.random().toString(36).slice(2, 8)}`);
  const [session, setSession] = useState<MediaSession | undefined>(undefined);
  const [local, setLocal] = useState<MediaStream | undefined>(undefined);
  const [tiles, setTiles] = useState<readonly Tile[]>([]);
  const [people, setPeople] = useState<readonly RemoteParticipant[]>([]);
  const [status, setStatus] = useState('');
  const action = useAction();
  useEffect(() => () => void session?.close(), [session]);

  const join = (): Promise<void> => action.run(async () => {
    // stream ids are room-wide: each console tab publishes a pair of its own
    const base = 2 * Math.floor(Math.random() * 1_000_000) + 1;
    const getToken = (): Promise<MediaToken> => api<MediaToken>('POST', `/v1/projects/${projectId}/temporary-token`, {
      room_id: room, user_id: user, role: 'host', publish_streams: [base, base + 1], subscribe_room: true, ttl_seconds: 600,
    });
    const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
    const s = await connect({ token: await getToken(), getToken, secure: location.protocol === 'https:' });
    const refreshPeople = (): void => setPeople(s.participants());
    const add = (t: RemoteTrack): void => setTiles((all) => {
      const existing = all.find((x) => x.participantId === t.participantId);
      if (existing) {
        existing.stream.addTrack(t.track as MediaStreamTrack);
        return [...all];
      }
      return [...all, { participantId: t.participantId, userId: t.userId, stream: new MediaStream([t.track as MediaStreamTrack]) }];
    });
    const remove = (t: RemoteTrack): void => setTiles((all) => all.flatMap((x) => {
      if (x.participantId !== t.participantId) return [x];
      x.stream.removeTrack(t.track as MediaStreamTrack);
      return x.stream.getTracks().length > 0 ? [x] : [];
    }));
    s.on('trackSubscribed', add);
    s.on('trackUnsubscribed', remove);
    s.on('participantJoined', refreshPeople);
    s.on('participantLeft', (p) => {
      refreshPeople();
      setTiles((all) => all.filter((x) => x.participantId !== p.participantId));
    });
    s.on('revoked', () => {
      document.body.dataset['removedAt'] = String(Date.now());
      setStatus('You were removed from the room.');
    });
    s.on('disconnected', (d) => {
      if (!d.willReconnect) {
        setSession(undefined);
        setTiles([]);
        setPeople([]);
        media.getTracks().forEach((t) => t.stop());
        setLocal(undefined);
        if (d.error.code !== 'revoked' && d.error.code !== 'closed') setStatus(`Disconnected: ${d.error.message} (${d.error.code})`);
      }
    });
    for (const track of media.getTracks()) await s.publishTrack(track);
    setLocal(media);
    setSession(s);
    refreshPeople();
    setStatus(`In ${room} as ${user}.`);
  });

  return (
    <section aria-labelledby="room-title">
      <h2 id="room-title">Test room</h2>
      <p>Join a room of this project from this browser with a temporary token: no App Secret needed. Open the console in a
        second tab or on your phone and join the same room to see a call work.</p>
      {!session && (
        <form class="inline" onSubmit={(e) => { e.preventDefault(); void join(); }}>
          <Field label="Room"><input required maxLength={64} value={room} onInput={(e) => setRoom(e.currentTarget.value)} /></Field>
          <Field label="Your user id"><input required maxLength={64} value={user} onInput={(e) => setUser(e.currentTarget.value)} /></Field>
          <button type="submit" disabled={action.busy || archived}>Join test room</button>
        </form>
      )}
      <ErrorText error={action.error} />
      <p role="status" class="status">{status}</p>
      {session && (
        <>
          <button type="button" onClick={() => { void session.close(); setStatus('You left the room.'); }}>Leave room</button>
          <div class="tiles">
            {local && <figure><Video stream={local} muted label={`${user} (you)`} /><figcaption>{user} (you)</figcaption></figure>}
            {tiles.map((t) => <figure key={t.participantId}><Video stream={t.stream} muted={false} label={t.userId} /><figcaption>{t.userId}</figcaption></figure>)}
          </div>
          <h3>Participants</h3>
          <ul class="people">
            {people.map((p) => (
              <li key={p.participantId}>
                {p.userId} <small>{p.role} · {p.participantId}</small>
                <button type="button" class="danger" aria-label={`Remove ${p.userId}`} onClick={() => void action.run(async () => {
                  await api('POST', `/v1/projects/${projectId}/rooms/${encodeURIComponent(room)}/participants/${encodeURIComponent(p.participantId)}/remove`);
                  document.body.dataset['removeAnsweredAt'] = String(Date.now());
                })}>Remove</button>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
