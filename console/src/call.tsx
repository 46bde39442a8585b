/** A call in the page through the app SDK and @rtc/react: devices, a microphone level, the join, the tiles; shared by the test room and the join page. */
import { connect, type LocalTrack, type MediaSession, type MediaToken, type RemoteParticipant } from '@rtc/app-sdk';
import type { TokenResponse } from '@rtc/protocol';
import { AudioRenderer, LeaveButton, MuteButton, ParticipantGrid, useParticipants, useTracks } from '@rtc/react';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Field } from './ui.tsx';

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

/** One call: join with a token, the participants (through @rtc/react's hooks), the end of it. */
export function useCall(): {
  session: MediaSession | undefined; people: readonly RemoteParticipant[]; status: string; published: readonly LocalTrack[];
  join: (token: TokenResponse, media: MediaStream, getToken?: () => Promise<MediaToken>) => Promise<MediaSession>;
  left: () => void;
} {
  const [session, setSession] = useState<MediaSession | undefined>(undefined);
  const [published, setPublished] = useState<readonly LocalTrack[]>([]);
  const [status, setStatus] = useState('');
  const people = useParticipants(session);
  useEffect(() => () => void session?.close(), [session]);
  const join = async (token: TokenResponse, media: MediaStream, getToken?: () => Promise<MediaToken>): Promise<MediaSession> => {
    const s = await connect({ token, ...(getToken ? { getToken } : {}), secure: location.protocol === 'https:' });
    s.on('revoked', () => {
      document.body.dataset['removedAt'] = String(Date.now());
      setStatus('You were removed from the room.');
    });
    s.on('disconnected', (d) => {
      if (!d.willReconnect) {
        setSession(undefined);
        setPublished([]);
        if (d.error.code !== 'revoked' && d.error.code !== 'closed') setStatus(`Disconnected: ${d.error.message} (${d.error.code})`);
      }
    });
    const tracks: LocalTrack[] = [];
    for (const track of media.getTracks()) tracks.push(await s.publishTrack(track));
    setPublished(tracks);
    setSession(s);
    setStatus(`In ${token.room_id} as ${token.user_id}.`);
    return s;
  };
  return { session, people, status, published, join, left: () => setStatus('You left the room.') };
}

/**
 * The call's status line, then this page's own preview and a tile for every other participant
 * (@rtc/react's grid: each tile's size bounds the video received), their sound, and the call's
 * buttons: mute the microphone, turn the camera off, leave.
 */
export function CallView({ call, media, user, leaveLabel }: { call: ReturnType<typeof useCall>; media: MediaStream | undefined; user: string; leaveLabel: string }) {
  const tracks = useTracks(call.session);
  const mic = call.published.find((t) => t.kind === 'audio');
  const camera = call.published.find((t) => t.kind === 'video');
  return (
    <>
      <p role="status" class="status">{call.status}</p>
      <ParticipantGrid session={call.session} className="tiles">
        {media && <figure><Video stream={media} muted label={`${user} (you)`} /><figcaption>{user} (you)</figcaption></figure>}
      </ParticipantGrid>
      <AudioRenderer tracks={tracks} />
      {call.session && (
        <div class="call-controls">
          <MuteButton track={mic} className="secondary" label={(muted) => (muted ? 'Unmute microphone' : 'Mute microphone')} />
          <MuteButton track={camera} className="secondary" label={(muted) => (muted ? 'Turn camera on' : 'Turn camera off')} />
          <LeaveButton session={call.session} className="secondary" onLeave={call.left}>{leaveLabel}</LeaveButton>
        </div>
      )}
    </>
  );
}

/** Two pairs of stream ids of its own for each page: stream ids are room-wide. */
export function ownStreams(): [number, number] {
  const base = 2 * Math.floor(Math.random() * 1_000_000) + 1;
  return [base, base + 1];
}
