import type { StoreHealth } from '../core/ports.ts';
import type { BillingStore } from '../billing/store.ts';
import type { AccountStore, CredentialStore, ProjectStore } from '../customers/store.ts';
import type { KeyRingStore } from '../keys/store.ts';
import type { GrantPermissionStore, LiveParticipantStore, MediaNodeStore, RoomCutoffStore, RoomSettingsStore } from '../rooms/store.ts';
import type { MediaSessionStore } from '../sessions/store.ts';
import type { RedeemedInvitationStore, RevocationStore, TokenCountStore } from '../tokens/store.ts';
import type { WebhookStore } from '../webhooks/store.ts';

/**
 * The whole store of a deployment: each module's slice of it (declared in the module's own
 * `store.ts`), kept in one database. The SQLite and PostgreSQL stores (sqlite.ts, postgres.ts)
 * assemble it from the modules' adapters over one connection.
 */
export interface Store extends StoreHealth, KeyRingStore, AccountStore, ProjectStore, CredentialStore, RevocationStore, TokenCountStore, RedeemedInvitationStore,
  LiveParticipantStore, MediaNodeStore, RoomCutoffStore, RoomSettingsStore, GrantPermissionStore, BillingStore, WebhookStore, MediaSessionStore {
  close(): Promise<void>;
}
