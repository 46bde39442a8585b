import {
  quoteCreateSchema, quoteListSchema, quoteSchema, quotesQuerySchema, subscriptionRequestCreateSchema,
  subscriptionRequestListSchema, subscriptionRequestSchema, subscriptionRequestsQuerySchema, projectUsageSchema,
} from './schemas.ts';
import { idParam, requestComponent, responseComponent, type Operation } from '../http/registry.ts';
import { consoleOperation, projectId } from '../http/console-operation.ts';

const quote = responseComponent(quoteSchema, 'Quote');
const request = responseComponent(subscriptionRequestSchema, 'SubscriptionRequest');
const quoteId = { quote_id: idParam("quote id (quo_…); another account's quote is 404") };
const requestId = { request_id: idParam("subscription request id (sreq_…); another account's request is 404") };

/** Billing quotes and subscription requests of the signed-in account (docs/billing.md). */
export const BILLING_API = {
  createQuote: consoleOperation({
    id: 'createQuote', method: 'POST', path: '/v1/billing/quotes', tag: 'Billing: quotes',
    summary: 'Price expected monthly usage on a plan, in a currency',
    description: 'Amounts are integers in the minor unit of the quote currency. Each line is computed exactly, converted '
      + 'exactly, and rounded once, half to even; the volume discount applies to the usage subtotal; total = monthly fee + '
      + 'usage subtotal - discount. The quote is stored as shown, never changes, and names its price-list version. '
      + 'An account may create 60 quotes a minute.',
    body: requestComponent(quoteCreateSchema, 'QuoteCreate'),
    example: { plan: 'starter', currency: 'EUR', usage: { audio: 120000, video_hd: 30000, turn_relay: 2000 } },
    responses: { 201: { description: 'the quote', schema: quote } },
    errors: ['rate_limited', [503, 'unavailable']],
  }),
  listQuotes: consoleOperation({
    id: 'listQuotes', method: 'GET', path: '/v1/billing/quotes', tag: 'Billing: quotes',
    summary: 'Quotes of the account, newest first', query: quotesQuerySchema,
    responses: { 200: { description: 'one page', schema: responseComponent(quoteListSchema, 'QuoteList') } },
  }),
  getQuote: consoleOperation({
    id: 'getQuote', method: 'GET', path: '/v1/billing/quotes/{quote_id}', tag: 'Billing: quotes',
    summary: 'One quote, exactly as it was created', pathParams: quoteId,
    responses: { 200: { description: 'the quote', schema: quote } },
  }),
  createSubscriptionRequest: consoleOperation({
    id: 'createSubscriptionRequest', method: 'POST', path: '/v1/billing/subscription-requests',
    tag: 'Billing: subscription requests', summary: 'Ask for a plan for a project',
    description: 'Starts pending; an operator approves or rejects it, the customer may cancel it while pending. A project has at '
      + 'most one pending request (409 conflict). The project must be the account\'s (404) and not archived (403); a quote_id '
      + 'must name a quote of the account (404) for the same plan (400).',
    body: requestComponent(subscriptionRequestCreateSchema, 'SubscriptionRequestCreate'),
    example: { project_id: 'prj_AAAAAAAAAAAAAAAAAAAAAA', plan: 'business', note: 'Launch in September' },
    responses: { 201: { description: 'the pending request', schema: request } },
    errors: ['project_archived', 'not_found', 'conflict'],
  }),
  listSubscriptionRequests: consoleOperation({
    id: 'listSubscriptionRequests', method: 'GET', path: '/v1/billing/subscription-requests',
    tag: 'Billing: subscription requests', summary: 'Subscription requests of the account, newest first',
    query: subscriptionRequestsQuerySchema,
    responses: { 200: { description: 'one page', schema: responseComponent(subscriptionRequestListSchema, 'SubscriptionRequestList') } },
    errors: ['not_found'],
  }),
  getSubscriptionRequest: consoleOperation({
    id: 'getSubscriptionRequest', method: 'GET', path: '/v1/billing/subscription-requests/{request_id}',
    tag: 'Billing: subscription requests', summary: 'One subscription request', pathParams: requestId,
    responses: { 200: { description: 'the request', schema: request } },
  }),
  cancelSubscriptionRequest: consoleOperation({
    id: 'cancelSubscriptionRequest', method: 'POST', path: '/v1/billing/subscription-requests/{request_id}/cancel',
    tag: 'Billing: subscription requests', summary: 'Withdraw a pending request',
    description: 'pending → cancelled. Cancelling a cancelled request changes nothing (200); an approved or rejected one is 409 conflict.',
    pathParams: requestId,
    responses: { 200: { description: 'the cancelled request', schema: request } },
    errors: ['conflict'],
  }),
} satisfies Record<string, Operation>;

export const BILLING_API_OPERATIONS: readonly Operation[] = Object.values(BILLING_API);

/**
 * The console's usage view of a project (docs/console.md, "Usage"): listed among the project's
 * operations in the reference (openapi/operations.ts), not with the account's billing.
 */
export const BILLING_CONSOLE_API = {
  getProjectUsage: consoleOperation({
    id: 'getProjectUsage', method: 'GET', path: '/v1/projects/{id}/usage', tag: 'Projects',
    summary: 'Tokens issued and participant minutes per day for the project, for the console',
    description: 'Counted per UTC day; each process writes its token counts every 5 seconds, so a token issued elsewhere shows '
      + 'within that time. Participant minutes come from the session history (GET /v1/projects/{id}/sessions), as media '
      + 'nodes record each join and leave.',
    pathParams: projectId,
    responses: { 200: { description: 'the last 14 days', schema: projectUsageSchema } },
    errors: ['rate_limited'],
  }),
} satisfies Record<string, Operation>;
