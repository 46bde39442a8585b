export { MEDIA_PATH } from '@rtc/protocol';
export { connect } from './connect.ts';
export { MediaSession } from './session.ts';
export { LocalStream, MAX_FRAME_PAYLOAD_BYTES } from './session/local-stream.ts';
export type { SessionState } from './session/types.ts';
export { MediaError, MEDIA_ERROR_CODES } from './errors.ts';
export type { MediaErrorCode } from './errors.ts';
export type {
  ConnectOptions, MediaToken, FrameKind, StreamSource, PublishOptions, ReceivedFrame, RemoteParticipant, RemoteStream, MediaSessionEvents,
  MediaPermissions, ParticipantMetadataChange, ServerData,
  DisconnectInfo, ReconnectOptions, WebSocketLike, WebSocketConstructor, WebSocketEventLike, WebRtcOptions, ConnectionQuality,
} from './types.ts';
export { LocalTrack } from './webrtc/local-track.ts';
export { RemoteTrack } from './webrtc/remote-track.ts';
export type { StreamLayer } from './webrtc/remote-track.ts';
export { DEFAULT_VIDEO_LAYERS, defaultVideoLayers } from './webrtc/publish-plan.ts';
export type { PublishTrackOptions, VideoLayer } from './webrtc/publish-plan.ts';
export type { VideoBounds } from './webrtc/video-bounds.ts';
export type { E2eeStats } from './webrtc/e2ee-worker.ts';
export { SignalingClient, SignalingError } from './signaling.ts';
export type {
  SignalingClientOptions, SignalingEvent, SignalingFetch, SignalingJoinResult, SignalingLeaveReason, SignalingParticipant,
  SignalingRenewal,
} from './signaling.ts';
