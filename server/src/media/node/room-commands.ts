import type { BusEvent } from '../../core/ports.ts';
import { roomKey, type Room } from '../room/room.ts';
import type { Session } from '../session/session.ts';

/**
 * Applies a change of the room service API (permissions, mutes, metadata, settings, data) to the
 * sessions and rooms of this node it concerns; other events are left alone (revocations and
 * archives reach the grant guard).
 */
export function applyRoomCommand(event: BusEvent, participants: ReadonlyMap<string, Session>, rooms: ReadonlyMap<string, Room>): void {
  switch (event.type) {
    case 'stream.muted': {
      const session = participants.get(event.participantId);
      if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId) return;
      session.setStreamMuted(event.streamId, event.muted);
      return;
    }
    case 'participant.updated': {
      const session = participants.get(event.participantId);
      if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId) return;
      session.applyPermissions({ pub: new Set(event.publish), subs: new Set(event.subscribe), subRoom: event.subscribeRoom, setAt: event.setAt });
      return;
    }
    case 'participant.metadata': {
      const session = participants.get(event.participantId);
      if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId || !session.isJoined) return;
      session.metadata = event.metadata;
      session.attributes = { ...event.attributes };
      rooms.get(roomKey(event.projectId, event.roomId))?.broadcast({
        type: 'participant_metadata', participant_id: session.participantId, user_id: session.userId,
        metadata: session.metadata, attributes: { ...session.attributes },
      });
      return;
    }
    case 'room.updated': {
      const room = rooms.get(roomKey(event.projectId, event.roomId));
      if (!room) return;
      const changed = room.settings.metadata !== event.metadata;
      room.settings = { metadata: event.metadata, maxParticipants: event.maxParticipants, emptyTimeout: event.emptyTimeout };
      if (changed) room.broadcast({ type: 'room_metadata', metadata: event.metadata });
      return;
    }
    case 'room.data': {
      const room = rooms.get(roomKey(event.projectId, event.roomId));
      if (!room) return;
      const everyone = event.participantIds.length === 0 && event.userIds.length === 0;
      const message = { type: 'server_data', data: event.data, topic: event.topic } as const;
      for (const member of room.members.values()) {
        if (everyone || event.participantIds.includes(member.participantId) || event.userIds.includes(member.userId)) member.sendControl(message);
      }
      return;
    }
    default:
  }
}
