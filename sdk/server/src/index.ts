export { TokenClient } from './token-client.ts';
export type { ListRoomsOptions, RemoveOptions, SendDataOptions } from './token-client.ts';
export type { TokenClientOptions } from './client-options.ts';
export type { CallOptions } from './api-call.ts';
export type { TokenClientEvent, TokenClientLogger } from './client-events.ts';
export type {
  RtcRoom, RtcParticipant, ParticipantPermissions, ParticipantUpdate, RoomCreateRequest, RoomList, RoomUpdate, DataMessageSent,
  RtcPublishedStream, RtcStreamLayer, StreamSource,
} from './rooms.ts';
export { TokenApiError, TokenNetworkError, TokenResponseError } from './errors.ts';
export type { TokenOperation } from './errors.ts';
export { DEFAULT_RETRY } from './retry.ts';
export type { RetryOptions } from './retry.ts';
export { assertServerRuntime } from './runtime.ts';
export type { FetchLike, FetchInitLike, FetchResponseLike, ClockLike, SleepLike } from './transport.ts';
export type {
  TokenRequest, TokenResponse, ParticipantRemoved, MediaCredentials, TurnCredentials, SignalingCredentials, RevocationRequest, Role,
} from '@rtc/protocol';
export type { ErrorCode } from '@rtc/protocol';
export { verifyWebhook, WebhookVerificationError } from './webhook.ts';
export type { VerifyWebhookOptions, WebhookErrorCode, WebhookHeaders } from './webhook.ts';
export type {
  ParticipantEventData, ParticipantLeftData, ParticipantLeftReason, RoomEventData, TrackEventData, WebhookEvent, WebhookEventData,
  WebhookEventType,
} from '@rtc/protocol';
