/** Playout delay bounds are in units of 10 ms, 12 bits each; the largest is no upper bound to speak of. */
export const PLAYOUT_DELAY_MAX_UNITS = 0xfff;
/** The playout floor adds this to the repair times it covers, and stays under PLAYOUT_FLOOR_MAX_MS. */
const PLAYOUT_FLOOR_MARGIN_MS = 30;
const PLAYOUT_FLOOR_MAX_MS = 400;

/**
 * How long the client should hold a video's frames before playing them (ms; 0: no floor), from the
 * time the publisher's uplink takes to repair a loss and the round trip of a repair on the client's
 * own link while it loses packets. A client that plays frames sooner drops the late one and the
 * frames after it.
 */
export function playoutFloorMs(uplinkRecoveryMs: number, downlinkRepairMs: number): number {
  const sum = uplinkRecoveryMs + downlinkRepairMs;
  return sum === 0 ? 0 : Math.min(sum + PLAYOUT_FLOOR_MARGIN_MS, PLAYOUT_FLOOR_MAX_MS);
}

/** The playout delay extension's 3 bytes: minimum and maximum, 12 bits each, in 10 ms units. */
export function playoutDelay(minUnits: number, maxUnits: number): Buffer {
  const min = Math.min(minUnits, 0xfff);
  return Buffer.from([min >> 4, ((min & 0xf) << 4) | (maxUnits >> 8), maxUnits & 0xff]);
}
