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
  stop(): void;
  addEventListener(type: 'ended', listener: () => void): void;
  removeEventListener(type: 'ended', listener: () => void): void;
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
  addTransceiver(trackOrKind: MediaStreamTrackLike | MediaTrackKind, init: { direction: TransceiverDirection; streams?: readonly unknown[] }): RtpTransceiverLike;
  setConfiguration(configuration: PeerConfiguration): void;
  getStats(): Promise<StatsReportLike>;
  close(): void;
  addEventListener(type: 'icegatheringstatechange' | 'connectionstatechange', listener: () => void): void;
  addEventListener(type: 'icecandidate', listener: (event: IceCandidateEventLike) => void): void;
  removeEventListener(type: 'icegatheringstatechange' | 'connectionstatechange', listener: () => void): void;
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
