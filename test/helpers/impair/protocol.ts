/** The messages between an impaired link's handle (impaired-link.ts) and its process (link-process.ts), over IPC. */
import type { DirectionCounters } from './direction.ts';
import type { LinkSettings, LinkSettingsPatch } from './link-settings.ts';

/** Given to the process as its one argument (JSON). */
export interface LinkStart {
  /** Where the link listens (UDP), port 0 for any free one. */
  readonly listen: { readonly host: string; readonly port: number };
  /** Where it forwards to: one upstream socket per client address. */
  readonly target: { readonly host: string; readonly port: number };
  readonly settings: LinkSettings;
  /** Seeds the random draws (loss, jitter) of both directions. */
  readonly seed: number;
}

export type LinkRequest =
  | { readonly id: number; readonly op: 'set'; readonly patch: LinkSettingsPatch }
  | { readonly id: number; readonly op: 'stats' }
  | { readonly id: number; readonly op: 'close' };

/** One direction's counters, and how long a packet arriving now would wait in its queue. */
export interface DirectionStats extends DirectionCounters {
  readonly backlogMs: number;
  /** Packets waiting for their delivery time (delay, jitter, cap). */
  readonly inFlight: number;
}

export interface LinkStats {
  readonly up: DirectionStats;
  readonly down: DirectionStats;
  /** Client addresses seen, each with its own upstream socket. */
  readonly clients: number;
  readonly settings: LinkSettings;
}

export type LinkReply =
  | { readonly op: 'ready'; readonly port: number }
  | { readonly op: 'reply'; readonly id: number; readonly ok: true; readonly result?: LinkStats | LinkSettings }
  | { readonly op: 'reply'; readonly id: number; readonly ok: false; readonly error: string };
