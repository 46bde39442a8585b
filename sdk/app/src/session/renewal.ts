import { NONCE_BYTES } from '@rtc/protocol';
import { mediaKeyOf, type Connection, type JoinedMessage, type ServerMessage } from '../connection.ts';
import { proofOfPossession, randomBytes, sha256 } from '../crypto.ts';
import type { Emitter } from '../emitter.ts';
import { fromB64u, toB64u, utf8 } from '../encoding.ts';
import { MediaError, requestError } from '../errors.ts';
import type { MediaSessionEvents, MediaToken } from '../types.ts';
import type { SessionSettings } from './types.ts';

/** What the renewal part asks of its session. */
export interface RenewalHost {
  /** The connection while the session is connected, otherwise `undefined`. */
  connection(): Connection | undefined;
  /** Expiry of the grant in use, seconds since the epoch. */
  expiresAt(): number;
  /** The server took the grant of this token in place of the one in use. */
  renewed(token: MediaToken): void;
}

/**
 * Renewal of the grant on the open connection (docs/protocol/media.md): a fresh token from
 * `getToken`, proved with the server's latest renewal challenge, before the grant in use expires.
 */
export class Renewal {
  private readonly settings: Pick<SessionSettings, 'getToken' | 'renewBeforeSeconds'>;
  private readonly host: RenewalHost;
  private readonly events: Emitter<MediaSessionEvents>;
  private renewNonce: Uint8Array | undefined;
  private serverOffsetMs = 0;
  private lifetimeSeconds = 0;
  private renewing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(settings: Pick<SessionSettings, 'getToken' | 'renewBeforeSeconds'>, host: RenewalHost, events: Emitter<MediaSessionEvents>) {
    this.settings = settings;
    this.host = host;
    this.events = events;
  }

  /** Renews now; one renewal at a time. */
  renew(): Promise<void> {
    if (!this.settings.getToken) return Promise.reject(new TypeError('renewal needs the getToken option'));
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  /** A new connection joined with this token: the server's clock, its first challenge, the grant's lifetime. */
  joined(joined: JoinedMessage, token: MediaToken): void {
    this.serverOffsetMs = joined.server_time_ms - Date.now();
    this.takeNonce(joined);
    this.lifetimeSeconds = lifetimeOf(token, this.serverNowMs());
  }

  /** Keeps the renewal challenge a control message carries: each one replaces the last. */
  takeNonce(message: ServerMessage): void {
    const nonce = 'renew_nonce' in message ? message.renew_nonce : undefined;
    if (nonce !== undefined) this.renewNonce = fromB64u(nonce);
  }

  /** Sets the timer of the next renewal: `renewBeforeSeconds` before expiry, or after `delayMs`. */
  schedule(delayMs?: number): void {
    clearTimeout(this.timer);
    if (!this.settings.getToken || !this.host.connection()) return;
    const expiresMs = this.host.expiresAt() * 1000;
    const lead = this.settings.renewBeforeSeconds ?? (this.lifetimeSeconds >= 120 ? 60 : this.lifetimeSeconds / 2);
    const delay = delayMs ?? expiresMs - lead * 1000 - this.serverNowMs();
    this.timer = setTimeout(() => void this.renewOnSchedule(), Math.max(0, delay));
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private serverNowMs(): number {
    return Date.now() + this.serverOffsetMs;
  }

  private async renewOnce(): Promise<void> {
    let token: MediaToken;
    try {
      token = await this.settings.getToken!();
    } catch (cause) {
      throw new MediaError('token_unavailable', 'getToken failed', { cause });
    }
    const connection = this.host.connection();
    const nonce = this.renewNonce;
    if (!connection) throw new MediaError('connection_failed', 'the session is not connected');
    if (!nonce) throw new MediaError('renew_refused', 'no renewal challenge is available', { reason: 'stale_challenge' });
    const mediaKey = mediaKeyOf(token);
    const clientNonce = randomBytes(NONCE_BYTES);
    const proof = await proofOfPossession(mediaKey, await sha256(utf8(token.media.grant)), nonce, clientNonce);
    mediaKey.fill(0);
    this.renewNonce = undefined;
    const reply = await connection.request({ type: 'renew', grant: token.media.grant, nonce: toB64u(clientNonce), proof: toB64u(proof) });
    if (reply.type !== 'renewed') throw requestError(reply);
    this.host.renewed(token);
    this.lifetimeSeconds = lifetimeOf(token, this.serverNowMs());
    this.events.emit('renewed', { expiresAt: this.host.expiresAt() });
    this.schedule();
  }

  private async renewOnSchedule(): Promise<void> {
    try {
      await this.renew();
    } catch (err) {
      if (!this.host.connection()) return;
      const error = err instanceof MediaError ? err : new MediaError('renew_refused', 'the renewal failed', { cause: err });
      this.events.emit('renewalFailed', { error });
      const remaining = this.host.expiresAt() * 1000 - this.serverNowMs();
      if (remaining > 0) this.schedule(Math.min(10_000, Math.max(250, remaining / 4)));
    }
  }
}

function lifetimeOf(token: MediaToken, serverNowMs: number): number {
  const issued = typeof token.issued_at === 'number' ? token.issued_at : serverNowMs / 1000;
  return Math.max(0, token.expires_at - issued);
}
