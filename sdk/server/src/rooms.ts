import type { RtcParticipant, RtcRoom } from '@rtc/protocol';

export type {
  DataMessageSent, ParticipantPermissions, ParticipantUpdate, RoomCreateRequest, RoomList, RoomUpdate, RtcParticipant, RtcPublishedStream,
  RtcRoom, RtcStreamLayer, StreamSource,
} from '@rtc/protocol';

export function isRoom(json: unknown): json is RtcRoom {
  return isObject(json) && typeof json['room_id'] === 'string' && (json['media_node'] === null || typeof json['media_node'] === 'string')
    && typeof json['started_at'] === 'number' && typeof json['metadata'] === 'string' && typeof json['max_participants'] === 'number'
    && typeof json['empty_timeout'] === 'number' && Array.isArray(json['participants']) && json['participants'].every(isParticipant);
}

export function isParticipant(json: unknown): json is RtcParticipant {
  return isObject(json) && typeof json['participant_id'] === 'string' && typeof json['user_id'] === 'string'
    && typeof json['role'] === 'string' && Array.isArray(json['publish_streams']) && Array.isArray(json['subscribe_streams'])
    && typeof json['subscribe_room'] === 'boolean' && typeof json['joined_at'] === 'number' && typeof json['metadata'] === 'string'
    && isObject(json['attributes']) && Object.values(json['attributes']).every((v) => typeof v === 'string')
    && Array.isArray(json['streams']) && json['streams'].every(isPublishedStream);
}

function isPublishedStream(json: unknown): boolean {
  return isObject(json) && typeof json['stream_id'] === 'number' && typeof json['kind'] === 'string'
    && typeof json['source'] === 'string' && typeof json['muted'] === 'boolean' && Array.isArray(json['layers']);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
