import { z } from 'zod';
import { MEDIA_KINDS, ROLES, STREAM_SOURCES } from '@rtc/protocol';
import { epochSeconds, responseComponent } from '../http/registry.ts';
import type { DataMessageSent, RtcParticipantQuality, RtcPublishedStream, RtcStreamLayer } from '@rtc/protocol';
import type { ParticipantRemoved, ParticipantView, RoomEnded, RoomView } from './service.ts';

/**
 * Response bodies of the room service API, as rooms/service.ts builds them. Each `satisfies` the type it
 * documents, and the contract test checks real responses against them, so a field added or renamed
 * in a use case fails one or the other.
 */

const streamLayerSchema = responseComponent(z.strictObject({
  rid: z.string().nullable().meta({ description: 'the rid of the layer in the publisher\'s offer; null without simulcast' }),
  width: z.int().nullable().meta({ description: 'pixels, from the layer\'s last key frame; null until one arrived' }),
  height: z.int().nullable(),
  bitrate: z.int().nullable().meta({ description: 'bit/s received lately, RTP overhead included; null when none arrived lately' }),
}) satisfies z.ZodType<RtcStreamLayer>, 'PublishedStreamLayer');

const publishedStreamSchema = responseComponent(z.strictObject({
  stream_id: z.int(),
  kind: z.enum(MEDIA_KINDS),
  source: z.enum(STREAM_SOURCES).meta({ description: 'what the publisher said the stream carries; unknown when it did not say' }),
  muted: z.boolean().meta({ description: 'muted by the customer\'s server: the media node forwards none of its media' }),
  layers: z.array(streamLayerSchema).meta({
    description: 'simulcast layers the media node receives of a WebRTC video, smallest first, as measured within about 10 s; empty otherwise',
  }),
}) satisfies z.ZodType<RtcPublishedStream>, 'PublishedStream');

const participantQualitySchema = responseComponent(z.strictObject({
  bitrate_in: z.int().min(0).meta({ description: 'bit/s of media payload received from the participant (2 significant digits)' }),
  bitrate_out: z.int().min(0).meta({ description: 'bit/s of media payload sent to the participant (2 significant digits)' }),
  packet_loss_in: z.number().min(0).max(1).nullable().meta({
    description: 'fraction of the RTP packets the participant sends that the media node did not receive (worst stream, to 0.001); null without WebRTC publishing',
  }),
  packet_loss_out: z.number().min(0).max(1).nullable().meta({
    description: 'fraction of the RTP packets sent to the participant that its receiver reports say it lost (worst stream, to 0.001); null without WebRTC receiving',
  }),
  rtt_ms: z.int().min(0).nullable().meta({ description: 'round trip to the participant from its receiver reports, to 10 ms; null until measured' }),
  layers: z.record(z.string(), z.string()).meta({ description: 'stream id → rid of the simulcast layer the participant receives now' }),
  updated_at: epochSeconds.meta({ description: 'when the media node measured it: at most one heartbeat (10 s) ago' }),
}) satisfies z.ZodType<RtcParticipantQuality>, 'ParticipantQuality');

const roomParticipantSchema = responseComponent(z.strictObject({
  participant_id: z.string().meta({ description: 'pa_…, given by the media server at join' }),
  user_id: z.string(),
  role: z.enum(ROLES),
  publish_streams: z.array(z.int()),
  subscribe_streams: z.array(z.int()),
  subscribe_room: z.boolean(),
  joined_at: epochSeconds,
  metadata: z.string().meta({ description: 'set by the customer\'s server; \'\' when none' }),
  attributes: z.record(z.string(), z.string()).meta({ description: 'set by the customer\'s server, key by key; {} when none' }),
  streams: z.array(publishedStreamSchema).meta({ description: 'the streams the participant publishes now, in the order published' }),
  quality: participantQualitySchema.nullable().meta({
    description: 'its media quality over the media node\'s last heartbeat period; null until the first heartbeat after the join',
  }),
  media_node: z.string().meta({ description: 'host:port of the media node the participant is joined on: a room may span several' }),
}) satisfies z.ZodType<ParticipantView>, 'RoomParticipant');

const roomFields = z.strictObject({
  room_id: z.string(),
  media_node: z.string().nullable().meta({
    description: 'host:port of the media node the room started on, of those holding it now; null while nobody is joined',
  }),
  media_nodes: z.array(z.string()).meta({
    description: 'host:port of every media node holding the room\'s participants now, the one it started on first; empty while nobody is joined',
  }),
  started_at: epochSeconds.meta({
    description: 'when the room opened on its media node; while nobody is joined, when its settings were stored',
  }),
  metadata: z.string().meta({ description: 'set by the customer\'s server; \'\' when none' }),
  max_participants: z.int().min(0).meta({ description: 'the most participants admitted at once; 0: the media node\'s bound only' }),
  empty_timeout: z.int().min(0).meta({ description: 'seconds the room is kept once empty before it finishes' }),
  participants: z.array(roomParticipantSchema).meta({ description: 'oldest join first' }),
}) satisfies z.ZodType<RoomView>;

export const roomSchema = responseComponent(roomFields, 'Room');
export const roomListSchema = responseComponent(z.strictObject({
  rooms: z.array(roomSchema).meta({ description: 'one page of the live rooms of the project, by room id' }),
  next_cursor: z.string().nullable().meta({ description: 'pass as cursor for the next page; null on the last page' }),
}), 'RoomList');
export const dataMessageSentSchema = responseComponent(z.strictObject({
  sent: z.literal(true),
  recipients: z.int().min(0).meta({
    description: 'the live participants the message was addressed to, as presence listed them when it was sent',
  }),
}) satisfies z.ZodType<DataMessageSent>, 'DataMessageSent');
export const participantSchema = roomParticipantSchema;
export const participantRemovedSchema = responseComponent(z.strictObject({
  removed: z.literal(true),
  user_id: z.string().meta({ description: 'the user removed: the cut-off applies to every session of this user in the room' }),
  cut_off_at: epochSeconds.meta({
    description: 'stored before the answer: the room\'s tokens of the user issued (iat) at or before this second are refused',
  }),
  banned_until: epochSeconds.optional().meta({
    description: 'present when a ban is in force (asked for now, or still running from an earlier removal): equal to cut_off_at',
  }),
}) satisfies z.ZodType<ParticipantRemoved>, 'ParticipantRemoved');
export const roomEndedSchema = responseComponent(z.strictObject({
  ended: z.literal(true),
  participants: z.int().min(0).meta({ description: 'how many participants were closed' }),
  cut_off_at: epochSeconds.meta({ description: 'stored before the answer: the room\'s tokens issued (iat) at or before this second are refused' }),
}) satisfies z.ZodType<RoomEnded>, 'RoomEnded');
