import { z } from 'zod';
import {
  MAX_DATA_DESTINATIONS, MAX_EMPTY_TIMEOUT_SECONDS, MAX_PARTICIPANT_ATTRIBUTES, MAX_PARTICIPANT_METADATA_BYTES, MAX_ROOM_METADATA_BYTES,
  MAX_SERVER_DATA_BYTES, ROLES,
} from '@rtc/protocol';
import type { BusEvent } from '../core/ports.ts';

const id = z.string().min(1).max(256);
const seconds = z.number().int().nonnegative();
const streams = z.array(z.number().int().nonnegative()).max(1024);

/** Every event the platform publishes, checked field by field (a bus is not trusted blindly). */
const busEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('grant.revoked'), grantId: id, projectId: id, expiresAt: seconds }),
  z.strictObject({ type: z.literal('credential.changed'), appId: id }),
  z.strictObject({ type: z.literal('project.archived'), projectId: id, cutAt: seconds, expiresAt: seconds }),
  z.strictObject({
    type: z.literal('room.cut_off'), projectId: id, roomId: z.string().min(1).max(512), userId: z.string().min(1).max(512).nullable(),
    cutAt: seconds, expiresAt: seconds,
  }),
  z.strictObject({
    type: z.literal('participant.updated'), projectId: id, roomId: z.string().min(1).max(512), participantId: id,
    publish: streams, subscribe: streams, subscribeRoom: z.boolean(),
    // absent from a node of an earlier version during a rolling upgrade: the oldest change there is
    setAt: z.number().int().nonnegative().default(0),
  }),
  z.strictObject({
    type: z.literal('room.updated'), projectId: id, roomId: z.string().min(1).max(512),
    metadata: z.string().max(MAX_ROOM_METADATA_BYTES), maxParticipants: z.number().int().nonnegative(),
    emptyTimeout: z.number().int().nonnegative().max(MAX_EMPTY_TIMEOUT_SECONDS),
  }),
  z.strictObject({
    type: z.literal('participant.metadata'), projectId: id, roomId: z.string().min(1).max(512), participantId: id,
    metadata: z.string().max(MAX_PARTICIPANT_METADATA_BYTES),
    attributes: z.record(z.string().max(256), z.string().max(4096)).refine((a) => Object.keys(a).length <= MAX_PARTICIPANT_ATTRIBUTES),
  }),
  z.strictObject({
    type: z.literal('room.data'), projectId: id, roomId: z.string().min(1).max(512),
    data: z.string().max(Math.ceil(MAX_SERVER_DATA_BYTES / 3) * 4), topic: z.string().max(512).nullable(),
    participantIds: z.array(id).max(MAX_DATA_DESTINATIONS), userIds: z.array(id).max(MAX_DATA_DESTINATIONS),
  }),
  z.strictObject({
    type: z.literal('stream.muted'), projectId: id, roomId: z.string().min(1).max(512), participantId: id,
    streamId: z.number().int().positive(), muted: z.boolean(),
  }),
  z.strictObject({
    type: z.literal('media.members'), projectId: id, roomId: z.string().min(1).max(512), node: id,
    members: z.array(z.strictObject({
      participantId: id, userId: z.string().min(1).max(512), role: z.enum(ROLES), metadata: z.string().max(MAX_PARTICIPANT_METADATA_BYTES),
      attributes: z.record(z.string().max(256), z.string().max(4096)).refine((a) => Object.keys(a).length <= MAX_PARTICIPANT_ATTRIBUTES),
    })).max(1024), left: z.array(id).max(1024), whole: z.boolean(), ask: z.boolean(),
  }),
  z.strictObject({
    type: z.literal('media.streams'), projectId: id, roomId: z.string().min(1).max(512), node: id, url: z.string().regex(/^wss?:\/\/[^\s/]+$/).max(300),
    streams: z.array(z.strictObject({
      streamId: z.number().int().positive().max(0xffff_ffff), kind: z.enum(['audio', 'video', 'data']), layers: z.number().int().min(1).max(8),
      participantId: id, userId: z.string().min(1).max(512), muted: z.boolean(),
    })).max(1024),
    ask: z.boolean(),
  }),
]) satisfies z.ZodType<BusEvent>;

// a new kind of event must be added here too, or every other process would drop it
type Unchecked = Exclude<BusEvent['type'], z.infer<typeof busEventSchema>['type']>;
const everyEventChecked: [Unchecked] extends [never] ? true : never = true;
void everyEventChecked;

const envelopeSchema = z.strictObject({ origin: z.string().min(1).max(64), event: busEventSchema });

export interface Envelope {
  readonly origin: string;
  readonly event: BusEvent;
}

/** An event as it crosses between processes: the publisher's origin beside the event. */
export function encodeEnvelope(origin: string, event: BusEvent): string {
  return JSON.stringify({ origin, event });
}

/**
 * Reads a message of the shared channel; undefined for anything that is not an envelope of a
 * known event (something else published there: reported by the caller, never applied).
 */
export function decodeEnvelope(message: string): Envelope | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  const result = envelopeSchema.safeParse(parsed);
  return result.success ? result.data : undefined;
}
