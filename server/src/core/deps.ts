import type { LiveKeyRing } from './keyring.ts';
import type { MediaNodeDirectory } from './media-placement.ts';
import type { PasswordHasher } from './password.ts';
import type { Clock, CredentialVersions, EventBus, Limiter, ProjectEvents, TokenAdmission, TokenCounter, WebhookTargets } from './ports.ts';

/**
 * What the use cases need: ports and key material, chosen by the composition root. `S` is the
 * part of the store a module uses, its own slice and those of the modules it reads (each module
 * declares its slice in its `store.ts`); the composition root passes the whole store.
 */
export interface ServiceDeps<S = unknown> {
  readonly store: S;
  readonly limiter: Limiter;
  readonly bus: EventBus;
  readonly clock: Clock;
  /** Always the newest ring this process loaded (docs/operations/configuration.md, "Keys"). */
  readonly keys: LiveKeyRing;
  readonly passwords: PasswordHasher;
  /** Project events for webhooks (participant joined, token revoked, ...). */
  readonly events: ProjectEvents;
  /** The media nodes of a cluster (with Redis); undefined: the one media node of the config. */
  readonly mediaNodes?: MediaNodeDirectory | undefined;
  /** Checks webhook endpoint URLs for private targets; undefined: only the URL's form is checked. */
  readonly webhookTargets?: WebhookTargets | undefined;
  /** Wakes this process's webhook delivery worker, if it runs one. */
  readonly webhookWake?: (() => void) | undefined;
  /** Counts the tokens this process issues, per project and day; undefined: not counted. */
  readonly tokenUsage?: TokenCounter | undefined;
  /** Step 1 of a token request with the credential version, in one step (a cluster); undefined: `limiter` alone. */
  readonly tokenAdmission?: TokenAdmission | undefined;
  /** Told of every change to a credential or project (a cluster); undefined: nothing caches credentials across processes. */
  readonly credentialVersions?: CredentialVersions | undefined;
}

export const nowSec = (clock: Clock): number => Math.floor(clock.nowMs() / 1000);
