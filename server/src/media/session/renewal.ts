import { randomBytes } from 'node:crypto';
import { NONCE_BYTES, type ClientControl, type MediaCloseName, type RenewRefusal, type ServerControl } from '@rtc/protocol';
import type { Logger } from 'pino';
import { b64u } from '../../core/encoding.ts';
import { checkWithKeyReload } from '../../grant-guard/key-reload.ts';
import { errorReply } from './control.ts';
import type { GrantKeys, MediaGrant } from './grant-check.ts';
import { checkRenewal } from './handshake.ts';
import { grantFields, type Permissions, type SessionGrants } from './session-grants.ts';

type RenewControl = ClientControl & { readonly type: 'renew' };

/** What a renewal needs of the media server: keys, the clock and the revocation checks. */
export interface RenewalChecks {
  readonly keys: GrantKeys;
  readonly logger: Logger;
  nowMs(): number;
  isRefused(grant: MediaGrant): Promise<boolean>;
  isRefusedInMemory(grant: MediaGrant): boolean;
  /** The permissions set on the grant through the room service API, from the store; undefined when none. */
  grantPermissions(grant: MediaGrant): Promise<Permissions | undefined>;
}

/** The session a renewal belongs to. */
export interface RenewingSession {
  readonly isJoined: boolean;
  readonly grants: SessionGrants<unknown>;
  sendControl(message: ServerControl): void;
  close(name: MediaCloseName): void;
  /** Ends the streams `grant` no longer allows. */
  reconcile(grant: MediaGrant): void;
  /** The renewed grant is in force and the client told: the server records it. */
  renewed(): void;
}

/**
 * A joined session's renewals (docs/protocol/media.md, "Renewal"): each proves the new grant's
 * media key over a one-time challenge, is checked like a join, and must not be revoked; the grant
 * then takes over under the permissions the customer's server set.
 */
export class Renewal {
  private challenge: Buffer | undefined;
  private readonly session: RenewingSession;
  private readonly checks: RenewalChecks;

  constructor(session: RenewingSession, checks: RenewalChecks) {
    this.session = session;
    this.checks = checks;
  }

  /** A fresh challenge for the next renewal, as sent to the client. */
  nextChallenge(): string {
    this.challenge = randomBytes(NONCE_BYTES);
    return b64u(this.challenge);
  }

  handle(control: RenewControl): void {
    const challenge = this.challenge;
    // every renewal attempt consumes the challenge: a proof can be used once
    this.challenge = undefined;
    const refuse = (reason: RenewRefusal): void => {
      if (!this.session.isJoined) return;
      const nonce = this.nextChallenge();
      this.session.sendControl(errorReply(control.id, 'renew_refused', `the renewal was refused: ${reason}`, { reason, renew_nonce: nonce }));
    };
    if (!challenge) return refuse('stale_challenge');
    void checkWithKeyReload(
      () => checkRenewal(control, this.checks.keys, challenge, this.session.grants.current!, this.checks.nowMs()),
      this.checks.keys.reload,
      () => this.session.isJoined,
    ).then(
      (check) => {
        if (!this.session.isJoined) return;
        if (!check.ok) return refuse(check.reason);
        this.admit(control, check.grant, refuse);
      },
      (err: unknown) => {
        this.checks.logger.error({ err }, 'media: checking a renewal failed');
        this.session.close('internal_error');
      },
    );
  }

  private admit(control: RenewControl, next: MediaGrant, refuse: (reason: RenewRefusal) => void): void {
    if (!this.session.grants.makeRoomFor(next)) return refuse('too_many_grants');
    Promise.all([this.checks.isRefused(next), this.checks.grantPermissions(next)]).then(
      ([refused, stored]) => {
        if (!this.session.isJoined) return;
        if (refused || this.checks.isRefusedInMemory(next)) return refuse('revoked');
        const applied = this.session.grants.renew(next, stored);
        this.session.reconcile(applied);
        this.session.sendControl({ type: 'renewed', id: control.id, ...grantFields(applied), renew_nonce: this.nextChallenge() });
        this.session.renewed();
      },
      (err: unknown) => {
        this.checks.logger.error({ err }, 'media: revocation look-up failed');
        refuse('invalid_grant');
      },
    );
  }
}
