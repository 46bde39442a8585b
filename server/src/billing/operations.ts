import {
  quoteCreateSchema, quoteListSchema, quoteSchema, quotesQuerySchema, subscriptionRequestCreateSchema,
  subscriptionRequestListSchema, subscriptionRequestSchema, subscriptionRequestsQuerySchema,
} from './schemas.ts';
import { idParam, requestComponent, responseComponent, type Operation } from '../http/registry.ts';

const BODY_ERRORS = [[413, 'invalid_request'], [415, 'invalid_request']] as const;
const quote = responseComponent(quoteSchema, 'Quote');
const request = responseComponent(subscriptionRequestSchema, 'SubscriptionRequest');
const quoteId = { quote_id: idParam("quote id (quo_…); another account's quote is 404") };
const requestId = { request_id: idParam("subscription request id (sreq_…); another account's request is 404") };

/** Billing quotes and subscription requests of the signed-in account (docs/billing.md). */
export const BILLING_API = {
  createQuote: {
    id: 'createQuote', method: 'POST', path: '/v1/billing/quotes', hosts: ['api'], tag: 'Billing: quotes',
    summary: 'Price expected monthly usage on a plan, in a currency',
    description: 'Amounts are integers in the minor unit of the quote currency. Each line is computed exactly, converted '
      + 'exactly, and rounded once, half to even; the volume discount applies to the usage subtotal; total = monthly fee + '
      + 'usage subtotal - discount. The quote is stored as shown, never changes, and names its price-list version. '
      + 'An account may create 60 quotes a minute.',
    auth: 'bearer', body: requestComponent(quoteCreateSchema, 'QuoteCreate'),
    example: { plan: 'starter', currency: 'EUR', usage: { audio: 120000, video_hd: 30000, turn_relay: 2000 } },
    responses: { 201: { description: 'the quote', schema: quote } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'rate_limited', [503, 'unavailable']],
  },
  listQuotes: {
    id: 'listQuotes', method: 'GET', path: '/v1/billing/quotes', hosts: ['api'], tag: 'Billing: quotes',
    summary: 'Quotes of the account, newest first', auth: 'bearer', query: quotesQuerySchema,
    responses: { 200: { description: 'one page', schema: responseComponent(quoteListSchema, 'QuoteList') } },
    errors: ['invalid_request', 'unauthenticated'],
  },
  getQuote: {
    id: 'getQuote', method: 'GET', path: '/v1/billing/quotes/{quote_id}', hosts: ['api'], tag: 'Billing: quotes',
    summary: 'One quote, exactly as it was created', auth: 'bearer', pathParams: quoteId,
    responses: { 200: { description: 'the quote', schema: quote } },
    errors: ['unauthenticated', 'not_found'],
  },
  createSubscriptionRequest: {
    id: 'createSubscriptionRequest', method: 'POST', path: '/v1/billing/subscription-requests', hosts: ['api'],
    tag: 'Billing: subscription requests', summary: 'Ask for a plan for a project',
    description: 'Starts pending; an operator approves or rejects it, the customer may cancel it while pending. A project has at '
      + 'most one pending request (409 conflict). The project must be the account\'s (404) and not archived (403); a quote_id '
      + 'must name a quote of the account (404) for the same plan (400).',
    auth: 'bearer', body: requestComponent(subscriptionRequestCreateSchema, 'SubscriptionRequestCreate'),
    example: { project_id: 'prj_AAAAAAAAAAAAAAAAAAAAAA', plan: 'business', note: 'Launch in September' },
    responses: { 201: { description: 'the pending request', schema: request } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'project_archived', 'not_found', 'conflict'],
  },
  listSubscriptionRequests: {
    id: 'listSubscriptionRequests', method: 'GET', path: '/v1/billing/subscription-requests', hosts: ['api'],
    tag: 'Billing: subscription requests', summary: 'Subscription requests of the account, newest first',
    auth: 'bearer', query: subscriptionRequestsQuerySchema,
    responses: { 200: { description: 'one page', schema: responseComponent(subscriptionRequestListSchema, 'SubscriptionRequestList') } },
    errors: ['invalid_request', 'unauthenticated', 'not_found'],
  },
  getSubscriptionRequest: {
    id: 'getSubscriptionRequest', method: 'GET', path: '/v1/billing/subscription-requests/{request_id}', hosts: ['api'],
    tag: 'Billing: subscription requests', summary: 'One subscription request', auth: 'bearer', pathParams: requestId,
    responses: { 200: { description: 'the request', schema: request } },
    errors: ['unauthenticated', 'not_found'],
  },
  cancelSubscriptionRequest: {
    id: 'cancelSubscriptionRequest', method: 'POST', path: '/v1/billing/subscription-requests/{request_id}/cancel',
    hosts: ['api'], tag: 'Billing: subscription requests', summary: 'Withdraw a pending request',
    description: 'pending → cancelled. Cancelling a cancelled request changes nothing (200); an approved or rejected one is 409 conflict.',
    auth: 'bearer', pathParams: requestId,
    responses: { 200: { description: 'the cancelled request', schema: request } },
    errors: ['unauthenticated', 'not_found', 'conflict'],
  },
} satisfies Record<string, Operation>;

export const BILLING_API_OPERATIONS: readonly Operation[] = Object.values(BILLING_API);
