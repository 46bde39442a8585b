/** How often a media node tells the store it is alive (docs/reference/room-api.md, "Presence"). */
export const MEDIA_NODE_HEARTBEAT_MS = 10_000;

/** A media node not seen for this long has crashed: its participants are no longer listed, then purged. */
export const MEDIA_NODE_STALE_SECONDS = 30;
