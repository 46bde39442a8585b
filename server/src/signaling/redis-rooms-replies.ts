import { createHash } from 'node:crypto';
import { encodeSignalingEventData, type Role } from '@rtc/protocol';
import type { Clock } from '../core/ports.ts';
import { JOIN_LUA, OPEN_LUA, REMOVE_LUA, SEND_LUA } from './redis-rooms.lua.ts';
import type { EventSink, Participant } from './rooms.ts';
import { sseFrame } from './sse.ts';
import type { SessionIdentity } from './verify-token.ts';

/**
 * What the scripts of redis-rooms.lua.ts publish and return, read back into the room state's
 * terms (redis-rooms.ts): the notes on a room's channel, the presence hash as participants, and the
 * opening of an event stream.
 */

export interface Script {
  readonly lua: string;
  readonly sha: string;
}
const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
export const JOIN = script(JOIN_LUA);
export const REMOVE = script(REMOVE_LUA);
export const SEND = script(SEND_LUA);
export const OPEN = script(OPEN_LUA);

/** A change of a room as published by the scripts (redis-rooms.lua.ts). */
export type Note =
  | { readonly kind: 'E'; readonly seq: number; readonly to: string; readonly except: string; readonly endGrant: string; readonly endKind: string; readonly frame: string }
  | { readonly kind: 'G'; readonly grant: string; readonly endKind: string }
  | { readonly kind: 'S'; readonly grant: string; readonly streamId: string };

export function parseNote(message: string): Note | undefined {
  const parts: string[] = [];
  let at = 0;
  const fields = message.startsWith('E\n') ? 6 : 2;
  for (let i = 0; i < fields; i++) {
    const nl = message.indexOf('\n', at);
    if (nl < 0) break;
    parts.push(message.slice(at, nl));
    at = nl + 1;
  }
  const rest = message.slice(at);
  if (parts[0] === 'E' && parts.length === 6) {
    return { kind: 'E', seq: Number(parts[1]), to: parts[2]!, except: parts[3]!, endGrant: parts[4]!, endKind: parts[5]!, frame: rest };
  }
  if (parts[0] === 'G' && parts.length === 2) return { kind: 'G', grant: parts[1]!, endKind: rest };
  if (parts[0] === 'S' && parts.length === 2) return { kind: 'S', grant: parts[1]!, streamId: rest };
  return undefined;
}

/** The `P:users` hash, flattened (user, value, user, value…), as participants. */
export function participantsFrom(flat: readonly string[]): Participant[] {
  const rows: { since: number; participant: Participant }[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const match = /^\d+\|(\d+)\|(\d+)\|(.*)$/.exec(flat[i + 1]!);
    if (!match) continue;
    rows.push({ since: Number(match[1]), participant: { user_id: flat[i]!, role: match[3] as Role, joined_at_ms: Number(match[2]) } });
  }
  // in the order they joined: the sequence of each user's join event
  return rows.sort((a, b) => a.since - b.since).map((r) => r.participant);
}

/**
 * Writes what the OPEN script returned to a new stream: a snapshot (`kind` `snapshot`, `body` the
 * presence hash) or the events the reader missed (`body` the log entries it may see), then `ready`.
 * False once the sink refuses a frame: the reader fell behind.
 */
export function writeOpening(
  sink: EventSink, kind: string, body: unknown[], identity: SessionIdentity, resumed: boolean, headEventId: string, clock: Clock,
): boolean {
  let healthy = true;
  let replayed = 0;
  if (kind === 'snapshot') {
    const snapshot = encodeSignalingEventData('snapshot', {
      room_id: identity.roomId, participants: participantsFrom(body as string[]), reset: resumed,
    });
    healthy = sink.write(sseFrame('snapshot', snapshot, headEventId));
  } else {
    for (const [, fields] of body as [string, string[]][]) {
      // fields: a, at, f, frame, t, to, x, except
      const to = fields[5]!;
      if (fields[7] === identity.grantId || (to !== '' && to !== identity.userId)) continue;
      replayed += 1;
      if (!sink.write(fields[3]!)) {
        healthy = false;
        break;
      }
    }
  }
  return healthy && sink.write(sseFrame('ready', encodeSignalingEventData('ready', { room_id: identity.roomId, replayed, at_ms: clock.nowMs() })));
}
