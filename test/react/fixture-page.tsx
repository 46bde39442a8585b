/**
 * The page of test/react/react-sdk.test.ts: @rtc/react's hooks and components over a small fake
 * session, rendered by React or by Preact's compat layer (the bundle decides which `react` this
 * is). The test drives it through `globalThis.rtcReact`.
 */
import type { ConnectionQuality, MediaSessionEvents, RemoteParticipant, RemoteTrack } from '@rtc/app-sdk';
import { createRoot } from 'react-dom/client';
import {
  AudioRenderer, LeaveButton, MuteButton, ParticipantGrid, useConnectionQuality, useSession, useTracks, type MutableTrack,
} from '../../sdk/react/src/index.ts';

type Listener = (payload: unknown) => void;

/** What a fake track was asked: `attach VIDEO`, `detach VIDEO`, `bounds 320x240`, `bounds none`. */
class FakeTrack {
  readonly log: string[] = [];
  readonly streamId: number;
  readonly kind: 'audio' | 'video';
  readonly participantId: string;
  readonly userId: string;
  paused = false;
  layer: { layer: number; width: number; height: number } | undefined = undefined;
  constructor(streamId: number, kind: 'audio' | 'video', participantId: string, userId: string) {
    this.streamId = streamId;
    this.kind = kind;
    this.participantId = participantId;
    this.userId = userId;
  }
  attach(element: { tagName: string; dataset: Record<string, string> }): void {
    element.dataset['attached'] = String(this.streamId);
    this.log.push(`attach ${element.tagName}`);
  }
  detach(element: { tagName: string; dataset: Record<string, string> }): void {
    delete element.dataset['attached'];
    this.log.push(`detach ${element.tagName}`);
  }
  setVideoBounds(bounds: { maxWidth?: number; maxHeight?: number } | null): void {
    this.log.push(bounds === null ? 'bounds none' : `bounds ${bounds.maxWidth}x${bounds.maxHeight}`);
  }
}

class FakeSession {
  state: 'connected' | 'closed' = 'connected';
  readonly participantId = 'p-me';
  readonly userId = 'me';
  readonly roomId = 'room-1';
  readonly roomMetadata = '';
  people: RemoteParticipant[] = [];
  tracks: FakeTrack[] = [];
  closes = 0;
  readonly #listeners = new Map<string, Set<Listener>>();

  on<K extends keyof MediaSessionEvents>(type: K, handler: (payload: MediaSessionEvents[K]) => void): () => void {
    const set = this.#listeners.get(type) ?? new Set<Listener>();
    this.#listeners.set(type, set);
    set.add(handler as Listener);
    return () => set.delete(handler as Listener);
  }
  emit(type: keyof MediaSessionEvents, payload: unknown): void {
    for (const l of [...(this.#listeners.get(type) ?? [])]) l(payload);
  }
  listeners(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }
  participants(): RemoteParticipant[] {
    return [...this.people];
  }
  remoteTracks(): RemoteTrack[] {
    return [...this.tracks] as unknown as RemoteTrack[];
  }
  async close(): Promise<void> {
    this.closes++;
    this.state = 'closed';
    this.emit('disconnected', { code: 1000, reason: 'normal', willReconnect: false, error: { code: 'closed', message: 'the session was closed' } });
  }
}

class FakeMic implements MutableTrack {
  muted = false;
  mute(): void {
    this.muted = true;
  }
  unmute(): void {
    this.muted = false;
  }
}

function App({ session, mic }: { session: FakeSession; mic: FakeMic }) {
  const view = useSession(session);
  const quality = useConnectionQuality(session);
  const tracks = useTracks(session);
  return (
    <>
      <p id="state">{view.state}</p>
      <p id="ended">{view.ended?.error.code ?? ''}</p>
      <p id="quality">{quality?.quality ?? 'none'}</p>
      <ParticipantGrid session={session} className="grid" tileClassName="tile"
        actions={(p) => <button type="button">Remove {p.userId}</button>} />
      <AudioRenderer tracks={tracks} />
      <MuteButton track={mic} label={(muted) => (muted ? 'Unmute microphone' : 'Mute microphone')} />
      <LeaveButton session={session}>Leave room</LeaveButton>
    </>
  );
}

interface Doc {
  getElementById(id: string): unknown;
  querySelector(selector: string): { style: Record<string, string> } | null;
}
const doc = (globalThis as unknown as { document: Doc }).document;
const session = new FakeSession();
const mic = new FakeMic();
let root: ReturnType<typeof createRoot> | undefined;
/** Every track the page received, also after it ended: the test reads their logs. */
const every = new Map<number, FakeTrack>();

/** What the test calls. */
const api = {
  render(): void {
    root = createRoot(doc.getElementById('root') as Parameters<typeof createRoot>[0]);
    root.render(<App session={session} mic={mic} />);
  },
  unmount(): void {
    root?.unmount();
    root = undefined;
  },
  join(participantId: string, userId: string): void {
    const p: RemoteParticipant = { participantId, userId, role: 'speaker', metadata: '', attributes: {} };
    session.people.push(p);
    session.emit('participantJoined', p);
  },
  leave(participantId: string): void {
    const p = session.people.find((x) => x.participantId === participantId);
    session.people = session.people.filter((x) => x !== p);
    session.emit('participantLeft', p);
  },
  subscribe(participantId: string, streamId: number, kind: 'audio' | 'video'): void {
    const userId = session.people.find((x) => x.participantId === participantId)?.userId ?? '';
    const track = new FakeTrack(streamId, kind, participantId, userId);
    session.tracks.push(track);
    every.set(streamId, track);
    session.emit('trackSubscribed', track);
  },
  unsubscribe(streamId: number): void {
    const track = session.tracks.find((t) => t.streamId === streamId);
    session.tracks = session.tracks.filter((t) => t !== track);
    session.emit('trackUnsubscribed', track);
  },
  log(streamId: number): string[] {
    return every.get(streamId)?.log ?? [];
  },
  /** The server's reports on a received video: paused, or forwarding a layer of this size. */
  report(streamId: number, paused: boolean, width: number, height: number): void {
    const track = every.get(streamId);
    if (!track) return;
    track.paused = paused;
    track.layer = { layer: 1, width, height };
    session.emit(paused ? 'streamPaused' : 'streamResumed', paused ? { streamId, reason: 'bandwidth' } : { streamId });
    session.emit('streamLayer', { streamId, ...track.layer });
  },
  quality(quality: ConnectionQuality['quality']): void {
    session.emit('connectionQuality', { quality, rttMs: 20, packetLoss: 0 });
  },
  /** Sets the CSS width of a participant's tile (its video fills it). */
  resize(userId: string, width: string): void {
    const tile = doc.querySelector(`.tile[data-user="${userId}"]`);
    if (tile) tile.style['width'] = width;
  },
  mic: (): boolean => mic.muted,
  closes: (): number => session.closes,
  listeners: (): number => session.listeners(),
};

(globalThis as unknown as { rtcReact: typeof api }).rtcReact = api;
