import { BILLING_API_OPERATIONS } from './operations/billing-api.ts';
import { CUSTOMER_API_OPERATIONS } from './operations/customer-api.ts';
import { MEDIA_OPERATIONS } from './operations/media.ts';
import { ROOM_API_OPERATIONS } from './operations/room-api.ts';
import { PUBLIC_API_OPERATIONS } from './operations/public-api.ts';
import { SIGNALING_OPERATIONS } from './operations/signaling.ts';
import { TOKEN_API_OPERATIONS } from './operations/token-api.ts';
import { WEBHOOKS_API_OPERATIONS } from './operations/webhooks-api.ts';
import type { Operation } from './registry.ts';

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
