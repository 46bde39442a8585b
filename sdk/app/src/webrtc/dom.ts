/**
 * The parts of the browser's WebRTC API the SDK uses, declared structurally: the SDK is also
 * type-checked and run in Node, which has no DOM types and no `RTCPeerConnection`.
 */

export type MediaTrackKind = 'audio' | 'video';

/** A browser `MediaStreamTrack` (camera, microphone, screen, or a remote track). */
export interface MediaStreamTrackLike {
  readonly id: string;
  readonly kind: string;
  readonly readyState: string;
  enabled: boolean;
  /** `detail`, `text`, `motion` for video; what the encoder should favour. */
  contentHint?: string;
  getSettings?(): TrackSettingsLike;
  stop(): void;
  addEventListener(type: 'ended', listener: () => void): void;
  removeEventListener(type: 'ended', listener: () => void): void;
}

/** What `MediaStreamTrack.getSettings()` tells the SDK: a screen capture names its surface. */
export interface TrackSettingsLike {
  readonly width?: number;
  readonly height?: number;
  readonly frameRate?: number;
  /** `monitor`, `window` or `browser` for a track of `getDisplayMedia`; absent for a camera. */
  readonly displaySurface?: string;
}

/** One encoding of a sender (`RTCRtpEncodingParameters`): a simulcast layer when it has a `rid`. */
export interface RtpEncodingLike {
  rid?: string;
  active?: boolean;
  scaleResolutionDownBy?: number;
  maxBitrate?: number;
  maxFramerate?: number;
}

/** `RTCRtpSendParameters`, as far as the SDK changes them. */
export interface RtpSendParametersLike {
  encodings: RtpEncodingLike[];
  degradationPreference?: string;
}

export interface IceServer {
  readonly urls: string | readonly string[];
  readonly username?: string;
  readonly credential?: string;
}

export type IceTransportPolicy = 'all' | 'relay';

export interface PeerConfiguration {
  iceServers: readonly IceServer[];
  iceTransportPolicy: IceTransportPolicy;
  bundlePolicy: 'max-bundle';
  rtcpMuxPolicy: 'require';
  /** Candidates gathered as soon as the connection exists, before the first offer. */
  iceCandidatePoolSize?: number;
  encodedInsertableStreams?: boolean;
}

export interface SessionDescription {
  readonly type: string;
  readonly sdp: string;
}

export interface EncodedStreams {
  readonly readable: unknown;
  readonly writable: unknown;
}

export interface RtpSenderLike {
  readonly track: MediaStreamTrackLike | null;
  transform?: unknown;
  createEncodedStreams?(): EncodedStreams;
  replaceTrack(track: MediaStreamTrackLike | null): Promise<void>;
  getParameters?(): RtpSendParametersLike;
  setParameters?(parameters: RtpSendParametersLike): Promise<void>;
}

export interface RtpReceiverLike {
  readonly track: MediaStreamTrackLike;
  transform?: unknown;
  createEncodedStreams?(): EncodedStreams;
}

export interface CodecCapability {
  readonly mimeType: string;
  readonly clockRate: number;
  readonly channels?: number;
  readonly sdpFmtpLine?: string;
}

export type TransceiverDirection = 'sendonly' | 'recvonly' | 'inactive' | 'sendrecv' | 'stopped';

export interface RtpTransceiverLike {
  readonly mid: string | null;
  readonly sender: RtpSenderLike;
  readonly receiver: RtpReceiverLike;
  direction: TransceiverDirection;
  setCodecPreferences?(codecs: readonly CodecCapability[]): void;
}

/** What `addTransceiver` takes. */
export interface TransceiverInit {
  direction: TransceiverDirection;
  streams?: readonly unknown[];
  /** The simulcast layers of a sender, smallest first as the media server ranks them. */
  sendEncodings?: readonly RtpEncodingLike[];
}

/** The `icecandidate` event: `candidate` is null once gathering ended. */
export interface IceCandidateEventLike {
  readonly candidate: { readonly candidate: string } | null;
}

/** A stats report: a map of stats objects keyed by id. */
export interface StatsReportLike {
  forEach(callback: (stat: Readonly<Record<string, unknown>>) => void): void;
}

export interface PeerConnectionLike {
  readonly connectionState: string;
  readonly iceGatheringState: string;
  readonly localDescription: SessionDescription | null;
  createOffer(options?: { iceRestart?: boolean }): Promise<SessionDescription>;
  setLocalDescription(description: SessionDescription): Promise<void>;
  setRemoteDescription(description: SessionDescription): Promise<void>;
  addTransceiver(trackOrKind: MediaStreamTrackLike | MediaTrackKind, init: TransceiverInit): RtpTransceiverLike;
  setConfiguration(configuration: PeerConfiguration): void;
  getStats(): Promise<StatsReportLike>;
  close(): void;
  addEventListener(type: 'icegatheringstatechange' | 'connectionstatechange', listener: () => void): void;
  addEventListener(type: 'icecandidate', listener: (event: IceCandidateEventLike) => void): void;
  removeEventListener(type: 'icegatheringstatechange' | 'connectionstatechange', listener: () => void): void;
}

/**
 * An element that shows a remote video (`<video>`), for `RemoteTrack.attach`: its `srcObject`
 * is set, and with adaptive video its size on the page bounds the video received.
 */
export interface MediaElementLike {
  srcObject: unknown;
}

export interface ResizeObserverEntryLike {
  readonly target: unknown;
  /** The element's content box in CSS pixels. */
  readonly contentRect: { readonly width: number; readonly height: number };
}

export interface IntersectionObserverEntryLike {
  readonly target: unknown;
  readonly isIntersecting: boolean;
}

/** `ResizeObserver` and `IntersectionObserver` share this surface. */
export interface ElementObserverLike {
  observe(target: unknown): void;
  unobserve(target: unknown): void;
  disconnect(): void;
}

export interface DocumentLike {
  readonly visibilityState: string;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

export type PeerConnectionConstructor = new (configuration: PeerConfiguration) => PeerConnectionLike;

export interface WorkerLike {
  postMessage(message: unknown, transfer?: readonly unknown[]): void;
  addEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
  terminate(): void;
}

/** What the SDK looks up on `globalThis` in a browser. */
export interface BrowserWebRtc {
  readonly RTCPeerConnection?: PeerConnectionConstructor;
  readonly RTCRtpScriptTransform?: new (worker: WorkerLike, options: unknown) => unknown;
  readonly RTCRtpSender?: { getCapabilities?(kind: MediaTrackKind): { readonly codecs: readonly CodecCapability[] } | null };
  readonly RTCRtpReceiver?: { getCapabilities?(kind: MediaTrackKind): { readonly codecs: readonly CodecCapability[] } | null };
  readonly Worker?: new (url: string, options?: { name?: string }) => WorkerLike;
  readonly Blob?: new (parts: readonly string[], options: { type: string }) => unknown;
  readonly URL: { createObjectURL?(blob: unknown): string; revokeObjectURL?(url: string): void };
  readonly MediaStream?: new (tracks: readonly unknown[]) => unknown;
  readonly ResizeObserver?: new (callback: (entries: readonly ResizeObserverEntryLike[]) => void) => ElementObserverLike;
  readonly IntersectionObserver?: new (callback: (entries: readonly IntersectionObserverEntryLike[]) => void) => ElementObserverLike;
  readonly document?: DocumentLike;
  readonly devicePixelRatio?: number;
}

export function browserWebRtc(): BrowserWebRtc {
  return globalThis as unknown as BrowserWebRtc;
}

declare global {
  /**
   * The browser's `MediaStreamTrack`. Declared empty here so that the SDK's public types name it in
   * Node too; in a browser project this merges with the DOM's declaration.
   */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface MediaStreamTrack {}
}
