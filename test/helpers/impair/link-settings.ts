/**
 * What an impaired link does to the packets of one direction, and how a change is applied. Plain
 * data: it crosses the IPC channel to the link's process as JSON.
 */

/** How one direction of a link treats its packets. */
export interface DirectionSettings {
  /** Probability, from 0 to 1, that a packet is dropped on arrival (before the cap's queue). */
  readonly lossRate: number;
  /** Delay added to every packet, ms. */
  readonly delayMs: number;
  /** Each packet's delay is `delayMs` plus a uniform draw in [-jitterMs, +jitterMs] (never below 0). */
  readonly jitterMs: number;
  /** Bandwidth cap in kbit/s (IP and UDP headers counted: payload + 28 bytes); `null`: none. */
  readonly rateKbps: number | null;
  /**
   * Drop-tail queue in front of the cap, bounded in time at the cap's rate (so in bytes: rate ×
   * queueMs): a packet is dropped when the queue, with it, would hold more than `queueMs` of
   * sending (an empty queue always takes a packet).
   */
  readonly queueMs: number;
  /**
   * With jitter, `false` (the default) keeps packets in their order: a packet is never delivered
   * before the one sent ahead of it, as on a path whose delay varies with its queues. `true`
   * delivers each packet at its own drawn time, so jitter larger than the gap reorders them.
   */
  readonly reorder: boolean;
}

/** Both directions: `up` from the page (the link's client) to the target, `down` back. */
export interface LinkSettings {
  readonly up: DirectionSettings;
  readonly down: DirectionSettings;
}

/** A change: the fields named are replaced, the others kept. `rateKbps: null` lifts a cap. */
export interface LinkSettingsPatch {
  readonly up?: Partial<DirectionSettings>;
  readonly down?: Partial<DirectionSettings>;
}

/** 200 ms of queue at the cap's rate: 12.5 kB at 500 kbit/s, the order of a home router's buffer. */
export const DEFAULT_QUEUE_MS = 200;

/** A direction that forwards every packet at once. */
export const CLEAN_DIRECTION: DirectionSettings = Object.freeze({
  lossRate: 0, delayMs: 0, jitterMs: 0, rateKbps: null, queueMs: DEFAULT_QUEUE_MS, reorder: false,
});

export const CLEAN_LINK: LinkSettings = Object.freeze({ up: CLEAN_DIRECTION, down: CLEAN_DIRECTION });

/** The same change on both directions. */
export function bothWays(change: Partial<DirectionSettings>): LinkSettingsPatch {
  return { up: change, down: change };
}

function checkDirection(d: DirectionSettings, name: string): DirectionSettings {
  const nonNegative = (value: number, field: string): void => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new TypeError(`${name}.${field} must be a number of 0 or more`);
  };
  nonNegative(d.lossRate, 'lossRate');
  if (d.lossRate > 1) throw new TypeError(`${name}.lossRate must be at most 1`);
  nonNegative(d.delayMs, 'delayMs');
  nonNegative(d.jitterMs, 'jitterMs');
  nonNegative(d.queueMs, 'queueMs');
  if (d.rateKbps !== null) {
    nonNegative(d.rateKbps, 'rateKbps');
    if (d.rateKbps === 0) throw new TypeError(`${name}.rateKbps must be more than 0 (null lifts the cap)`);
  }
  if (typeof d.reorder !== 'boolean') throw new TypeError(`${name}.reorder must be a boolean`);
  return Object.freeze({ ...d });
}

/** The settings after a change; throws a TypeError naming the first invalid field. */
export function applyPatch(settings: LinkSettings, patch: LinkSettingsPatch): LinkSettings {
  const known = new Set(Object.keys(CLEAN_DIRECTION));
  for (const [name, change] of Object.entries(patch)) {
    if (name !== 'up' && name !== 'down') throw new TypeError(`unknown direction ${JSON.stringify(name)}`);
    for (const field of Object.keys(change ?? {})) {
      if (!known.has(field)) throw new TypeError(`${name}: unknown setting ${JSON.stringify(field)}`);
    }
  }
  return Object.freeze({
    up: checkDirection({ ...settings.up, ...patch.up }, 'up'),
    down: checkDirection({ ...settings.down, ...patch.down }, 'down'),
  });
}
