export { SignalingClient, SignalingError } from './signaling.ts';
export type {
  SignalingClientOptions, SignalingEvent, SignalingFetch, SignalingJoinResult, SignalingLeaveReason, SignalingParticipant,
  SignalingRenewal,
} from './signaling.ts';
