/** A call in the page through the app SDK: devices, a microphone level, the join, the tiles; shared by the test room and the join page. */
import { connect, type MediaSession, type MediaToken, type RemoteParticipant, type RemoteTrack } from '@rtc/app-sdk';
import type { TokenResponse } from '@rtc/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Field } from './ui.tsx';

export interface Tile {
  readonly participantId: string;
  readonly userId: string;
  readonly stream: MediaStream;
}

export function Video({ stream, muted, label }: { stream: MediaStream; muted: boolean; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    if (ref.current && ref.current.srcObject !== stream) ref.current.srcObject = stream;
    void ref.current?.play().catch(() => undefined);
  }, [stream]);
  return <video ref={ref} autoplay playsInline muted={muted} aria-label={label} data-user={label} />;
}

/** The camera and microphone chosen, previewed before the call. */
export function useDevices(active: boolean): {
  media: MediaStream | undefined; cameras: MediaDeviceInfo[]; microphones: MediaDeviceInfo[];
  camera: string; microphone: string; setCamera: (id: string) => void; setMicrophone: (id: string) => void; error: unknown;
} {
  const [media, setMedia] = useState<MediaStream | undefined>(undefined);
  const [devices, setDevices] = useState<MediaDeviceInfo[]>([]);
  // what the person chose (empty: the browser's default), and what the stream really uses
  const [wanted, setWanted] = useState<{ camera: string; microphone: string }>({ camera: '', microphone: '' });
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!active) return;
    let stream: MediaStream | undefined;
    let current = true;
    void navigator.mediaDevices.getUserMedia({
      audio: wanted.microphone ? { deviceId: { exact: wanted.microphone } } : true,
      video: { width: 640, height: 480, ...(wanted.camera ? { deviceId: { exact: wanted.camera } } : {}) },
    }).then(async (s) => {
      stream = s;
      if (!current) return s.getTracks().forEach((t) => t.stop());
      setError(undefined);
      setMedia(s);
      // labels are there once a device is in use
      setDevices(await navigator.mediaDevices.enumerateDevices());
    }, setError);
    return () => {
      current = false;
      stream?.getTracks().forEach((t) => t.stop());
      setMedia(undefined);
    };
  }, [active, wanted]);
  return {
    media, error,
    camera: media?.getVideoTracks()[0]?.getSettings().deviceId ?? wanted.camera,
    microphone: media?.getAudioTracks()[0]?.getSettings().deviceId ?? wanted.microphone,
    setCamera: (camera) => setWanted((w) => ({ ...w, camera })),
    setMicrophone: (microphone) => setWanted((w) => ({ ...w, microphone })),
    cameras: devices.filter((d) => d.kind === 'videoinput'), microphones: devices.filter((d) => d.kind === 'audioinput'),
  };
}

/** The microphone's level, 0 to 1, ten times a second. */
function useLevel(stream: MediaStream | undefined): number {
  const [level, setLevel] = useState(0);
  useEffect(() => {
    const track = stream?.getAudioTracks()[0];
    if (!stream || !track) return;
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 1024;
    context.createMediaStreamSource(new MediaStream([track])).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    const timer = setInterval(() => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const s of samples) sum += s * s;
      // RMS on a rough log scale: speech sits in the middle
      const rms = Math.sqrt(sum / samples.length);
      const now = Math.min(1, Math.max(0, 1 + Math.log10(rms + 1e-6) / 3));
      // falls back slowly, as level meters do, so that a short sound can be seen
      setLevel((shown) => (now >= shown ? now : Math.max(now, shown * 0.9 - 0.005)));
      if (context.state === 'suspended') void context.resume();
    }, 100);
    return () => {
      clearInterval(timer);
      void context.close();
    };
  }, [stream]);
  return level;
}

export function DevicePicker({ devices, disabled }: { devices: ReturnType<typeof useDevices>; disabled: boolean }) {
  const level = useLevel(devices.media);
  const label = (d: MediaDeviceInfo, i: number, kind: string): string => d.label || `${kind} ${i + 1}`;
  return (
    <div class="devices">
      <Field label="Camera">
        <select value={devices.camera} disabled={disabled || devices.cameras.length === 0} onChange={(e) => devices.setCamera(e.currentTarget.value)}>
          {devices.cameras.map((d, i) => <option key={d.deviceId} value={d.deviceId}>{label(d, i, 'Camera')}</option>)}
        </select>
      </Field>
      <Field label="Microphone">
        <select value={devices.microphone} disabled={disabled || devices.microphones.length === 0} onChange={(e) => devices.setMicrophone(e.currentTarget.value)}>
          {devices.microphones.map((d, i) => <option key={d.deviceId} value={d.deviceId}>{label(d, i, 'Microphone')}</option>)}
        </select>
      </Field>
      <label class="field"><span>Microphone level</span>
        <meter min={0} max={1} low={0.2} high={0.9} optimum={0.5} value={level} data-level={level.toFixed(2)} />
      </label>
    </div>
  );
}

/** One call: join with a token, the tiles and the participants, the end of it. */
export function useCall(): {
  session: MediaSession | undefined; tiles: readonly Tile[]; people: readonly RemoteParticipant[]; status: string;
  join: (token: TokenResponse, media: MediaStream, getToken?: () => Promise<MediaToken>) => Promise<MediaSession>;
  leave: () => void;
} {
  const [session, setSession] = useState<MediaSession | undefined>(undefined);
  const [tiles, setTiles] = useState<readonly Tile[]>([]);
  const [people, setPeople] = useState<readonly RemoteParticipant[]>([]);
  const [status, setStatus] = useState('');
  useEffect(() => () => void session?.close(), [session]);
  const join = async (token: TokenResponse, media: MediaStream, getToken?: () => Promise<MediaToken>): Promise<MediaSession> => {
    const s = await connect({ token, ...(getToken ? { getToken } : {}), secure: location.protocol === 'https:' });
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
        if (d.error.code !== 'revoked' && d.error.code !== 'closed') setStatus(`Disconnected: ${d.error.message} (${d.error.code})`);
      }
    });
    for (const track of media.getTracks()) await s.publishTrack(track);
    setSession(s);
    refreshPeople();
    setStatus(`In ${token.room_id} as ${token.user_id}.`);
    return s;
  };
  const leave = (): void => {
    void session?.close();
    setStatus('You left the room.');
  };
  return { session, tiles, people, status, join, leave };
}

/** The call's status line, then this page's own preview and a tile for every other participant. */
export function CallView({ call, media, user }: { call: ReturnType<typeof useCall>; media: MediaStream | undefined; user: string }) {
  return (
    <>
      <p role="status" class="status">{call.status}</p>
      <div class="tiles">
        {media && <figure><Video stream={media} muted label={`${user} (you)`} /><figcaption>{user} (you)</figcaption></figure>}
        {call.tiles.map((t) => <figure key={t.participantId}><Video stream={t.stream} muted={false} label={t.userId} /><figcaption>{t.userId}</figcaption></figure>)}
      </div>
    </>
  );
}

/** Two pairs of stream ids of its own for each page: stream ids are room-wide. */
export function ownStreams(): [number, number] {
  const base = 2 * Math.floor(Math.random() * 1_000_000) + 1;
  return [base, base + 1];
}
