/**
 * A browser's WebRTC surface for the app SDK's tests in Node: `RTCPeerConnection` (offers built
 * from its transceivers, ICE candidates on a timeline the test writes, answers recorded), encoded
 * transforms, a worker that answers statistics, `MediaStream`, and optionally the observers and
 * document of adaptive video. Only what sdk/app/src/webrtc/dom.ts declares; nothing is sent.
 */

export interface FakeCandidate {
  /** Milliseconds after gathering starts (or after the connection was made, with a candidate pool). */
  readonly afterMs: number;
  /** The `candidate:` line, e.g. `candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host`. */
  readonly line: string;
}

export interface FakeWebRtcOptions {
  /** The candidates each gathering finds, in order. */
  readonly candidates?: readonly FakeCandidate[];
  /** When gathering completes, ms (after the last candidate by default). */
  readonly completeAfterMs?: number;
  /** Offer the RID header extension only on video m-lines whose sender has rids, as Firefox does (Chromium: on every one). */
  readonly ridExtensionWithRidsOnly?: boolean;
  /** `getStats()` never settles, as Firefox's in flight when the peer connection closes. */
  readonly statsNeverSettle?: boolean;
}

export const HOST_UDP = 'candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host generation 0';
export const HOST_TCP = 'candidate:2 1 tcp 1518280447 192.0.2.2 9 typ host tcptype active generation 0';
export const RELAY_UDP = 'candidate:3 1 udp 41885439 198.51.100.7 60000 typ relay raddr 0.0.0.0 rport 0 generation 0';

type Listener = (event: unknown) => void;

class Events {
  private readonly listeners = new Map<string, Set<Listener>>();

  addEventListener(type: string, listener: Listener): void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener);
  }

  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener);
  }

  dispatch(type: string, event: unknown = {}): void {
    for (const l of [...(this.listeners.get(type) ?? [])]) l(event);
  }
}

export class FakeTrack extends Events {
  readonly id: string;
  readonly kind: string;
  readyState = 'live';
  enabled = true;
  contentHint = '';
  private readonly settings: Record<string, unknown>;
  private static next = 1;

  constructor(kind: string, settings: Record<string, unknown> = {}) {
    super();
    this.kind = kind;
    this.id = `track-${FakeTrack.next++}`;
    this.settings = settings;
  }

  getSettings(): Record<string, unknown> {
    return { ...this.settings };
  }

  stop(): void {
    this.readyState = 'ended';
  }
}

export interface FakeEncoding {
  rid?: string;
  scaleResolutionDownBy?: number;
  maxBitrate?: number;
  maxFramerate?: number;
  active?: boolean;
}

export class FakeTransceiver {
  mid: string | null = null;
  direction: string;
  readonly kind: string;
  readonly init: { direction: string; sendEncodings?: readonly FakeEncoding[] };
  codecPreferences: readonly { mimeType: string }[] | undefined;
  readonly sender: {
    track: FakeTrack | null; transform?: unknown; parameters: { encodings: FakeEncoding[]; degradationPreference?: string };
    replaceTrack(t: FakeTrack | null): Promise<void>;
    getParameters(): { encodings: FakeEncoding[]; degradationPreference?: string };
    setParameters(p: { encodings: FakeEncoding[]; degradationPreference?: string }): Promise<void>;
  };
  readonly receiver: { track: FakeTrack; transform?: unknown };

  constructor(kind: string, track: FakeTrack | null, init: { direction: string; sendEncodings?: readonly FakeEncoding[] }) {
    this.kind = kind;
    this.direction = init.direction;
    this.init = init;
    const parameters = { encodings: (init.sendEncodings ?? [{}]).map((e) => ({ ...e })) };
    this.sender = {
      track,
      parameters,
      replaceTrack: async (t) => {
        this.sender.track = t;
      },
      getParameters: () => structuredClone(this.sender.parameters),
      setParameters: async (p) => {
        this.sender.parameters = structuredClone(p);
      },
    };
    this.receiver = { track: new FakeTrack(kind) };
  }

  setCodecPreferences(codecs: readonly { mimeType: string }[]): void {
    this.codecPreferences = codecs;
  }
}

export class FakePeerConnection extends Events {
  readonly configuration: Record<string, unknown>;
  readonly transceivers: FakeTransceiver[] = [];
  readonly createdAt = performance.now();
  readonly remoteDescriptions: string[] = [];
  readonly offers: string[] = [];
  iceGatheringState = 'new';
  connectionState = 'new';
  private gathered: string[] = [];
  private local: { type: string; sdp: string } | null = null;
  private nextMid = 0;
  private gatheringStarted = false;
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private readonly env: FakeWebRtc;

  constructor(env: FakeWebRtc, configuration: Record<string, unknown>) {
    super();
    this.env = env;
    this.configuration = configuration;
  }

  get localDescription(): { type: string; sdp: string } | null {
    return this.local && { type: this.local.type, sdp: this.sdp() };
  }

  addTransceiver(trackOrKind: FakeTrack | string, init: { direction: string; sendEncodings?: readonly FakeEncoding[] }): FakeTransceiver {
    const track = typeof trackOrKind === 'string' ? null : trackOrKind;
    const t = new FakeTransceiver(track ? track.kind : (trackOrKind as string), track, init);
    this.transceivers.push(t);
    return t;
  }

  async createOffer(options: { iceRestart?: boolean } = {}): Promise<{ type: string; sdp: string }> {
    for (const t of this.transceivers) if (t.mid === null) t.mid = String(this.nextMid++);
    if (options.iceRestart) this.gatheringStarted = false;
    return { type: 'offer', sdp: this.sdp() };
  }

  async setLocalDescription(description: { type: string; sdp: string }): Promise<void> {
    this.local = description;
    this.offers.push(description.sdp);
    if (this.gatheringStarted) return;
    this.gatheringStarted = true;
    this.gathered = [];
    this.iceGatheringState = 'gathering';
    this.dispatch('icegatheringstatechange');
    // a candidate pool started gathering when the connection was made
    const pooled = Number(this.configuration['iceCandidatePoolSize'] ?? 0) > 0;
    const since = pooled ? performance.now() - this.createdAt : 0;
    const candidates = this.env.options.candidates ?? [{ afterMs: 1, line: HOST_UDP }];
    for (const c of candidates) {
      this.timers.push(setTimeout(() => {
        this.gathered.push(c.line);
        this.dispatch('icecandidate', { candidate: { candidate: c.line } });
      }, Math.max(0, c.afterMs - since)));
    }
    const complete = this.env.options.completeAfterMs ?? Math.max(0, ...candidates.map((c) => c.afterMs));
    this.timers.push(setTimeout(() => {
      this.iceGatheringState = 'complete';
      this.dispatch('icecandidate', { candidate: null });
      this.dispatch('icegatheringstatechange');
    }, Math.max(0, complete - since) + 1));
  }

  async setRemoteDescription(description: { type: string; sdp: string }): Promise<void> {
    this.remoteDescriptions.push(description.sdp);
  }

  setConfiguration(configuration: Record<string, unknown>): void {
    Object.assign(this.configuration, configuration);
  }

  getStats(): Promise<{ forEach(cb: (s: Record<string, unknown>) => void): void }> {
    if (this.env.options.statsNeverSettle) return new Promise(() => undefined);
    return Promise.resolve({ forEach: () => undefined });
  }

  close(): void {
    this.connectionState = 'closed';
    for (const t of this.timers) clearTimeout(t);
  }

  /** The offer as the browser would write it now: its m-lines, and the candidates gathered so far on the first. */
  private sdp(): string {
    const lines = ['v=0', 'o=- 1 2 IN IP4 127.0.0.1', 's=-', 't=0 0',
      `a=group:BUNDLE ${this.transceivers.map((t) => t.mid).join(' ')}`, 'a=fingerprint:sha-256 AA:BB', 'a=setup:actpass'];
    this.transceivers.forEach((t, i) => {
      lines.push(t.kind === 'audio' ? 'm=audio 9 UDP/TLS/RTP/SAVPF 111' : 'm=video 9 UDP/TLS/RTP/SAVPF 96', `a=mid:${t.mid}`, `a=${t.direction}`);
      const rids = (t.init.sendEncodings ?? []).map((e) => e.rid).filter((r): r is string => r !== undefined);
      if (t.kind === 'video' && (rids.length > 1 || !this.env.options.ridExtensionWithRidsOnly)) {
        lines.push('a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id');
      }
      if (rids.length > 1) lines.push(...rids.map((r) => `a=rid:${r} send`), `a=simulcast:send ${rids.join(';')}`);
      if (i === 0) lines.push(...this.gathered.map((c) => `a=${c}`));
    });
    return lines.join('\r\n') + '\r\n';
  }
}

/** The worker of the frame encryption: records what the page tells it, answers `stats`. */
export class FakeWorker extends Events {
  readonly messages: Record<string, unknown>[] = [];

  postMessage(message: Record<string, unknown>): void {
    this.messages.push(message);
    if (message['op'] === 'stats') {
      setTimeout(() => this.dispatch('message', { data: { op: 'stats', id: message['id'], stats: { encrypted: 0, decrypted: 0, dropped: 0 } } }), 0);
    }
  }

  terminate(): void {}
}

const CAPABILITIES: Record<string, { mimeType: string; clockRate: number }[]> = {
  video: ['VP8', 'rtx', 'VP9', 'H264', 'AV1', 'red', 'ulpfec'].map((c) => ({ mimeType: `video/${c}`, clockRate: 90000 })),
  audio: ['opus', 'red', 'G722', 'PCMU', 'telephone-event'].map((c) => ({ mimeType: `audio/${c}`, clockRate: 48000 })),
};

/** Installs the fake on `globalThis` (uninstall restores what was there). */
export class FakeWebRtc {
  readonly options: FakeWebRtcOptions;
  readonly peers: FakePeerConnection[] = [];
  readonly workers: FakeWorker[] = [];
  private readonly saved = new Map<string, PropertyDescriptor | undefined>();

  constructor(options: FakeWebRtcOptions = {}) {
    this.options = options;
  }

  install(extra: Record<string, unknown> = {}): this {
    const env = ((): FakeWebRtc => this)();
    const globals: Record<string, unknown> = {
      RTCPeerConnection: class extends FakePeerConnection {
        constructor(configuration: Record<string, unknown>) {
          super(env, configuration);
          env.peers.push(this);
        }
      },
      RTCRtpScriptTransform: class {
        readonly worker: unknown;
        readonly options: unknown;
        constructor(worker: unknown, options: unknown) {
          this.worker = worker;
          this.options = options;
        }
      },
      RTCRtpReceiver: { getCapabilities: (kind: string) => ({ codecs: CAPABILITIES[kind] ?? [] }) },
      Worker: class extends FakeWorker {
        constructor() {
          super();
          env.workers.push(this);
        }
      },
      MediaStream: class {
        private readonly tracks: unknown[];
        constructor(tracks: unknown[]) {
          this.tracks = [...tracks];
        }
        getTracks(): unknown[] {
          return [...this.tracks];
        }
      },
      ...extra,
    };
    for (const [name, value] of Object.entries(globals)) {
      this.saved.set(name, Object.getOwnPropertyDescriptor(globalThis, name));
      Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
    }
    return this;
  }

  uninstall(): void {
    for (const [name, descriptor] of this.saved) {
      if (descriptor) Object.defineProperty(globalThis, name, descriptor);
      else Reflect.deleteProperty(globalThis, name);
    }
    this.saved.clear();
  }

  /** The peer connection made last. */
  get peer(): FakePeerConnection {
    const pc = this.peers.at(-1);
    if (!pc) throw new Error('no peer connection');
    return pc;
  }
}
