export { ERROR_STATUS, isErrorCode } from './errors.ts';
export type { ErrorCode, ErrorBody } from './errors.ts';
export {
  DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS, MAX_BAN_SECONDS, MAX_PUBLISH_STREAMS, MAX_SUBSCRIBE_STREAMS, MAX_STREAM_ID,
  MAX_ID_LENGTH, TOKEN_API_BODY_LIMIT_BYTES, APP_REQUESTS_PER_MINUTE, ADDRESS_REQUESTS_PER_MINUTE,
  AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS, MAX_ROOM_METADATA_BYTES, MAX_PARTICIPANT_METADATA_BYTES,
  MAX_PARTICIPANT_ATTRIBUTES, MAX_ATTRIBUTE_KEY_BYTES, MAX_ATTRIBUTE_VALUE_BYTES, MAX_PARTICIPANT_ATTRIBUTES_BYTES, MAX_SERVER_DATA_BYTES,
  MAX_DATA_TOPIC_BYTES, MAX_DATA_DESTINATIONS, MAX_EMPTY_TIMEOUT_SECONDS, DEFAULT_EMPTY_TIMEOUT_SECONDS, ROOM_DATA_BODY_LIMIT_BYTES,
  MAX_ROOMS_CREATED_AHEAD, ROOM_CREATIONS_PER_MINUTE, TEMPORARY_TOKEN_MAX_TTL_SECONDS,
} from './limits.ts';
export { ROLES } from './wire.ts';
export type {
  Role, GrantedPermissions, TokenRequest, TokenResponse, MediaCredentials, TurnCredentials, SignalingCredentials,
  RevocationRequest, GrantClaims, RtcParticipant, RtcRoom, ParticipantPermissions, ParticipantUpdate, RoomCreateRequest, RoomUpdate,
  DataMessageRequest, DataMessageSent, RtcPublishedStream, RtcStreamLayer, StreamMuteRequest, RtcParticipantQuality,
} from './wire.ts';
export { GUEST_USER_PREFIX, ID_PREFIX, isId } from './ids.ts';
export { encodeBase64url, decodeBase64url } from './base64url.ts';
export type { IdKind } from './ids.ts';
export { ReplayWindow } from './replay-window.ts';
export {
  PROTOCOL_VERSION, HEADER_BYTES, TAG_BYTES, KIND_CODE, NONCE_LABEL, MAX_SEQ_HIGH, encodeHeader, decodeHeader,
} from './media-frame.ts';
export type { FrameHeader } from './media-frame.ts';
export {
  MEDIA_PATH, MEDIA_KINDS, MAX_CLIENT_MESSAGE_BYTES, MAX_GRANT_CHARS, MAX_REQUEST_ID, NONCE_BYTES, KEY_BYTES, REPLAY_WINDOW, KEY_LABEL,
  MAX_SDP_CHARS, MAX_RTC_TRACKS, MAX_SIMULCAST_LAYERS, MAX_VIDEO_DIMENSION, STREAM_SOURCES,
} from './media-limits.ts';
export type { MediaKind, StreamSource } from './media-limits.ts';
export { MEDIA_CLOSE } from './media-close.ts';
export type { MediaCloseName } from './media-close.ts';
export { parseJoin, parseClientControl, parseChallenge, parseServerControl } from './media-messages.ts';
export type {
  ChallengeMessage, JoinMessage, ClientControl, ClientRequest, ParticipantInfo, StreamInfo, GrantFields, MediaLimits, RenewRefusal,
  RequestErrorCode, ServerControl, ServerControlParse, RtcTrack, RtcTrackDirection, RtcVideoPreference,
} from './media-messages.ts';
export { parseGrantClaims } from './grant-claims.ts';
export { SIGNALING_LEAVE_REASONS, encodeSignalingEventData, parseSignalingEvent } from './signaling-events.ts';
export type {
  SignalingParticipant, SignalingJoinResult, SignalingLeaveReason, SignalingEvent, SignalingEventType, SignalingEventData,
} from './signaling-events.ts';
export { E2EE_TRAILER_BYTES, E2EE_MARKER, E2EE_TAG_BYTES, clearBytes, encodeTrailer, decodeTrailer, e2eeNonce } from './e2ee-frame.ts';
export type { E2eeTrailer } from './e2ee-frame.ts';
export {
  WEBHOOK_HEADERS, WEBHOOK_USER_AGENT, WEBHOOK_SIGNATURE_VERSION, WEBHOOK_TOLERANCE_SECONDS, WEBHOOK_EVENT_TYPES,
  PARTICIPANT_LEFT_REASONS, webhookSignedPrefix, formatWebhookSignatures, parseWebhookSignatures, parseWebhookTimestamp,
} from './webhooks.ts';
export type {
  RoomEventData, ParticipantEventData, ParticipantLeftData, ParticipantLeftReason, TrackEventData, WebhookEventData, WebhookEventType,
  WebhookEvent,
} from './webhooks.ts';
export type {
  Account, SessionTokens, Project, ProjectList, CredentialScope, Credential, CredentialWithSecret, CredentialList, TokenDayCount,
  ProjectUsage, RoomList, RoomEnded, ParticipantRemoved, RemovalRequest, PricingPlan, RevocationResult,
  ParticipantDayMinutes, UsageCost, MediaSession, MediaSessionList, WebhookDelivery, WebhookDeliveryList,
} from './customer-views.ts';
export {
  GRANT_TYPE, SIGNALING_TOKEN_TYPE, verifyJws, jwsKeyId, decodeJwsSegment, importEd25519Jwk, jwksKeyLookup,
} from './jws.ts';
export type { JwsFailure, JwsVerification, JwsKeyLookup, JwsVerifyKey, Ed25519PublicJwk } from './jws.ts';
