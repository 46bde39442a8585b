import { BILLING_API_OPERATIONS } from '../billing/operations.ts';
import { CUSTOMER_API_OPERATIONS } from '../customers/operations.ts';
import { MEDIA_OPERATIONS } from '../media/operations.ts';
import { ROOM_API_OPERATIONS } from '../rooms/operations.ts';
import { PUBLIC_API_OPERATIONS } from '../billing/public-operations.ts';
import { SIGNALING_OPERATIONS } from '../signaling/operations.ts';
import { TOKEN_API_OPERATIONS } from '../tokens/operations.ts';
import { WEBHOOKS_API_OPERATIONS } from '../webhooks/operations.ts';
import type { Operation } from '../http/registry.ts';

/** Every operation of the platform, in the order of the reference. A role's routes add their group here. */
export const OPERATIONS: readonly Operation[] = [
  ...TOKEN_API_OPERATIONS,
  ...ROOM_API_OPERATIONS,
  ...CUSTOMER_API_OPERATIONS,
  ...WEBHOOKS_API_OPERATIONS,
  ...PUBLIC_API_OPERATIONS,
  ...BILLING_API_OPERATIONS,
  ...SIGNALING_OPERATIONS,
  ...MEDIA_OPERATIONS,
];
