import { isUnreachable, type Connection } from '../connection.ts';
import type { Emitter } from '../emitter.ts';
import { MEDIA_CLOSE } from '@rtc/protocol';
import { CLOSE_CODES, MediaError, SOCKET_CLOSE } from '../errors.ts';
import type { MediaSessionEvents, MediaToken } from '../types.ts';
import { realScheduler, type Scheduler } from '../webrtc/video-bounds.ts';
import type { ReconnectPolicy, SessionSettings, SessionState } from './types.ts';

type ReconnectionSettings = Pick<SessionSettings, 'getToken' | 'reconnect' | 'keepaliveIntervalMs' | 'keepaliveTimeoutMs'>;

/** What the reconnection part asks of its session. */
export interface ReconnectionHost {
  state(): SessionState;
  /** The connection while the session is connected, otherwise `undefined`. */
  connection(): Connection | undefined;
  /** Opens a connection with this token; resolves once it joined, rejects when the join fails. */
  open(token: MediaToken): Promise<void>;
  /** The new connection joined: publishes again what the session published. */
  resume(): Promise<void>;
  /** No attempt is left: the session ends with this error. */
  end(error: MediaError, code: number, reason: string): void;
}

/**
 * How a session leaves a media node that is gone (docs/protocol/media.md, "Moving to another media
 * node"). The SDK cannot choose a node: the token names one, and the token API places the room on a
 * live node. So moving is asking `getToken` again at a short, steady pace (not the doubling backoff
 * of a network loss) while the token API notices the node is gone, and joining the node the fresh
 * token names.
 */
export const MOVE = {
  /** After a `going_away` close the first attempt waits at most this long (spreading a drained node's apps). */
  goingAwaySpreadMs: 100,
  /** Between attempts while moving (±20%). */
  intervalMs: 500,
  /**
   * How long the SDK keeps moving before the ordinary reconnection policy resumes: longer than a
   * cluster takes to stop placing rooms on a killed node (docs/operations/scale-out.md, "Media nodes").
   */
  windowMs: 30_000,
  /** Failed attempts after a loss that make the node count as not coming back (also one refused connection). */
  failuresBeforeMove: 2,
} as const;

/** Close codes that say the node itself is leaving: its sessions move at once. */
const GOING_AWAY = new Set<number>([MEDIA_CLOSE.going_away.code, SOCKET_CLOSE.service_restart, SOCKET_CLOSE.try_again_later]);

/**
 * Noticing a lost connection and coming back: keepalive pings that tell a silent network from a
 * quiet room, and after a loss whose close code allows it, new joins with a fresh token from
 * `getToken` (never after a revocation): with exponential backoff and jitter after a network loss,
 * and at a short steady pace once the node is leaving (`going_away`) or not coming back (a refused
 * connection, or two failed attempts).
 */
export class Reconnection {
  private readonly settings: ReconnectionSettings;
  private readonly host: ReconnectionHost;
  private readonly events: Emitter<MediaSessionEvents>;
  private readonly scheduler: Scheduler;
  private readonly random: () => number;
  private keepaliveTimer: ReturnType<typeof setInterval> | undefined;

  constructor(settings: ReconnectionSettings, host: ReconnectionHost, events: Emitter<MediaSessionEvents>,
    scheduler: Scheduler = realScheduler, random: () => number = Math.random) {
    this.settings = settings;
    this.host = host;
    this.events = events;
    this.scheduler = scheduler;
    this.random = random;
  }

  /** Pings the server on this connection, and abandons it when nothing was heard for too long. */
  keepAlive(connection: Connection): void {
    clearInterval(this.keepaliveTimer);
    const { keepaliveIntervalMs, keepaliveTimeoutMs } = this.settings;
    this.keepaliveTimer = setInterval(() => {
      if (connection !== this.host.connection()) return;
      if (Date.now() - connection.lastHeard > keepaliveTimeoutMs) {
        // nothing heard for too long: the network is gone even if the socket does not know it
        connection.abandon('timeout');
        return;
      }
      connection.request({ type: 'ping' }).catch(() => undefined);
    }, Math.min(keepaliveIntervalMs, keepaliveTimeoutMs / 2));
  }

  stopKeepalive(): void {
    clearInterval(this.keepaliveTimer);
  }

  /** Whether a connection closed with this code is followed by reconnection attempts. */
  follows(code: number): boolean {
    return this.settings.reconnect !== undefined && this.settings.getToken !== undefined && CLOSE_CODES[code]?.reconnect === true;
  }

  /**
   * Tries to join again until an attempt succeeds, the policy gives up, or the session moved on.
   * Attempts while moving do not count against `maxAttempts`: moving lasts up to `MOVE.windowMs`,
   * then the attempts the policy has left follow with its backoff.
   */
  async run(cause: MediaError): Promise<void> {
    const policy = this.settings.reconnect!;
    let error = cause;
    let movingSince = cause.closeCode !== undefined && GOING_AWAY.has(cause.closeCode) ? this.scheduler.now() : undefined;
    let failures = 0;
    let counted = 0;
    for (let attempt = 1; ; attempt++) {
      const moving = movingSince !== undefined && this.scheduler.now() - movingSince < MOVE.windowMs;
      if (!moving) counted += 1;
      if (counted > policy.maxAttempts) break;
      this.events.emit('reconnecting', { attempt, error, moving });
      await this.sleep(this.delay(moving, attempt, counted, policy));
      if (this.host.state() !== 'reconnecting') return;
      let token: MediaToken;
      try {
        token = await this.settings.getToken!();
      } catch (err) {
        error = new MediaError('token_unavailable', 'getToken failed', { cause: err });
        continue;
      }
      if (this.host.state() !== 'reconnecting') return;
      try {
        await this.host.open(token);
      } catch (err) {
        error = err instanceof MediaError ? err : new MediaError('connection_failed', 'the reconnection failed', { cause: err });
        if (error.closeCode !== undefined && CLOSE_CODES[error.closeCode]?.reconnect === false) break;
        failures += 1;
        // the node is not coming back: nothing listens at its address, or it failed twice
        if (movingSince === undefined && (isUnreachable(error) || failures >= MOVE.failuresBeforeMove)) movingSince = this.scheduler.now();
        continue;
      }
      // the state moved on while awaiting (a close, or a loss of the new connection)
      if (this.host.state() !== 'connected') return;
      await this.host.resume();
      return;
    }
    if (this.host.state() !== 'reconnecting') return;
    this.host.end(error, error.closeCode ?? SOCKET_CLOSE.abnormal, error.code);
  }

  /** The wait before an attempt, jittered: spread over `goingAwaySpreadMs` first after `going_away`, steady while moving, else doubling. */
  private delay(moving: boolean, attempt: number, counted: number, policy: ReconnectPolicy): number {
    if (moving && attempt === 1) return this.random() * MOVE.goingAwaySpreadMs;
    const jitter = 0.8 + this.random() * 0.4;
    if (moving) return MOVE.intervalMs * jitter;
    return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (counted - 1)) * jitter;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.scheduler.setTimeout(resolve, ms));
  }
}
