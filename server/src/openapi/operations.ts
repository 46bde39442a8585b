import { BILLING_API_OPERATIONS, BILLING_CONSOLE_API } from '../billing/operations.ts';
import { CUSTOMER_API_OPERATIONS } from '../customers/operations.ts';
import { MEDIA_OPERATIONS } from '../media/node/operations.ts';
import { ROOM_API_OPERATIONS, ROOM_CONSOLE_API } from '../rooms/operations.ts';
import { PUBLIC_API_OPERATIONS } from '../billing/public-operations.ts';
import { SESSION_CONSOLE_API } from '../sessions/operations.ts';
import { SIGNALING_OPERATIONS } from '../signaling/operations.ts';
import { TOKEN_API_OPERATIONS, TOKEN_CONSOLE_API } from '../tokens/operations.ts';
import { WEBHOOKS_API_OPERATIONS } from '../webhooks/operations.ts';
import type { Operation } from '../http/registry.ts';

/** Where the credentials begin in the customer API: the console's project operations stand before them. */
const FIRST_CREDENTIAL = CUSTOMER_API_OPERATIONS.findIndex((op) => op.tag === 'Credentials');

/**
 * Every operation of the platform, in the order of the reference. Each module declares its own
 * (`operations.ts`); a new group is added here, and its routes are served by the hosts its records name.
 */
export const OPERATIONS: readonly Operation[] = [
  ...TOKEN_API_OPERATIONS,
  ...ROOM_API_OPERATIONS,
  ...CUSTOMER_API_OPERATIONS.slice(0, FIRST_CREDENTIAL),
  TOKEN_CONSOLE_API.createTemporaryToken,
  TOKEN_CONSOLE_API.createInvitation,
  TOKEN_CONSOLE_API.redeemInvitation,
  ...Object.values(ROOM_CONSOLE_API),
  BILLING_CONSOLE_API.getProjectUsage,
  ...Object.values(SESSION_CONSOLE_API),
  ...CUSTOMER_API_OPERATIONS.slice(FIRST_CREDENTIAL),
  ...WEBHOOKS_API_OPERATIONS,
  ...PUBLIC_API_OPERATIONS,
  ...BILLING_API_OPERATIONS,
  ...SIGNALING_OPERATIONS,
  ...MEDIA_OPERATIONS,
];
