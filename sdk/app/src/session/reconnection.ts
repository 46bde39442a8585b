import type { Connection } from '../connection.ts';
import type { Emitter } from '../emitter.ts';
import { CLOSE_CODES, MediaError, SOCKET_CLOSE } from '../errors.ts';
import type { MediaSessionEvents, MediaToken } from '../types.ts';
import type { SessionSettings, SessionState } from './types.ts';

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
 * Noticing a lost connection and coming back: keepalive pings that tell a silent network from a
 * quiet room, and after a loss whose close code allows it, new joins with a fresh token from
 * `getToken`, with exponential backoff and jitter (never after a revocation).
 */
export class Reconnection {
  private readonly settings: ReconnectionSettings;
  private readonly host: ReconnectionHost;
  private readonly events: Emitter<MediaSessionEvents>;
  private keepaliveTimer: ReturnType<typeof setInterval> | undefined;

  constructor(settings: ReconnectionSettings, host: ReconnectionHost, events: Emitter<MediaSessionEvents>) {
    this.settings = settings;
    this.host = host;
    this.events = events;
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

  /** Tries to join again until an attempt succeeds, the policy gives up, or the session moved on. */
  async run(cause: MediaError): Promise<void> {
    const policy = this.settings.reconnect!;
    let error = cause;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
      this.events.emit('reconnecting', { attempt, error });
      const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
      await sleep(base * (0.8 + Math.random() * 0.4));
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
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
