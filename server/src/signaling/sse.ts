/** Server-Sent Events framing and the event ids of a room's log (docs/protocol/signaling.md). */

/**
 * One SSE frame. `data` is serialized JSON on a single line (JSON.stringify escapes every line
 * break), so no frame can smuggle a field into the stream.
 */
export function sseFrame(event: string, dataJson: string, id?: string): string {
  return id === undefined ? `event: ${event}\ndata: ${dataJson}\n\n` : `id: ${id}\nevent: ${event}\ndata: ${dataJson}\n\n`;
}

/** A comment line: ignored by readers, keeps idle connections visibly alive. */
export const SSE_KEEPALIVE = ': keepalive\n\n';

/** An event id: the room log's epoch (new whenever the room is created) and a sequence number. */
export function formatEventId(epoch: string, seq: number): string {
  return `${epoch}.${seq}`;
}

const EVENT_ID = /^([A-Za-z0-9_-]{1,32})\.(0|[1-9]\d{0,15})$/;

/** Parses a `Last-Event-ID`; undefined when it is not one of ours. */
export function parseEventId(text: string): { epoch: string; seq: number } | undefined {
  const match = EVENT_ID.exec(text);
  if (!match) return undefined;
  const seq = Number(match[2]);
  return Number.isSafeInteger(seq) ? { epoch: match[1]!, seq } : undefined;
}
