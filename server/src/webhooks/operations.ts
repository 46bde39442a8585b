import { deliveriesQuerySchema, webhookCreateSchema, webhookPatchSchema } from './schemas.ts';
import { idParam, requestComponent, type Operation } from '../http/registry.ts';
import { deliveryListSchema, webhookListSchema, webhookSchema, webhookTestSchema, webhookWithSecretSchema } from './responses.ts';

const projectId = { id: idParam('project id (prj_…); another account\'s project is 404') };
const webhookIds = { ...projectId, webhook_id: idParam('webhook id (wh_…) of an endpoint of the project') };
const BODY_ERRORS = [[413, 'invalid_request'], [415, 'invalid_request']] as const;

/** Webhook endpoints of a project (docs/reference/webhooks.md). */
export const WEBHOOKS_API = {
  createWebhook: {
    id: 'createWebhook', method: 'POST', path: '/v1/projects/{id}/webhooks', hosts: ['api'], tag: 'Webhooks',
    summary: 'Register an endpoint (its signing secret is shown only here and by rotate)',
    description: 'At most 10 endpoints per project. The URL must be https://, without credentials; a URL that resolves to a '
      + 'loopback, private or link-local address is refused unless the platform allows it (RTC_WEBHOOK_ALLOW_PRIVATE).',
    auth: 'bearer', pathParams: projectId, body: requestComponent(webhookCreateSchema, 'WebhookCreate'),
    example: { url: 'https://example.com/rtc-webhooks', event_types: ['token.revoked', 'project.archived'], description: 'backend' },
    responses: { 201: { description: 'the endpoint with its secret', schema: webhookWithSecretSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'project_archived', 'not_found', 'conflict'],
  },
  listWebhooks: {
    id: 'listWebhooks', method: 'GET', path: '/v1/projects/{id}/webhooks', hosts: ['api'], tag: 'Webhooks',
    summary: 'Endpoints of a project (without secrets)', auth: 'bearer', pathParams: projectId,
    responses: { 200: { description: 'oldest first', schema: webhookListSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  getWebhook: {
    id: 'getWebhook', method: 'GET', path: '/v1/projects/{id}/webhooks/{webhook_id}', hosts: ['api'], tag: 'Webhooks',
    summary: 'One endpoint (without its secret)', auth: 'bearer', pathParams: webhookIds,
    responses: { 200: { description: 'the endpoint', schema: webhookSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  updateWebhook: {
    id: 'updateWebhook', method: 'PATCH', path: '/v1/projects/{id}/webhooks/{webhook_id}', hosts: ['api'], tag: 'Webhooks',
    summary: 'Change the URL, event types, description, or enable and disable',
    description: 'A disabled endpoint gets no new events; deliveries already recorded for it are still attempted.',
    auth: 'bearer', pathParams: webhookIds, body: requestComponent(webhookPatchSchema, 'WebhookPatch'),
    example: { enabled: false },
    responses: { 200: { description: 'the endpoint', schema: webhookSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'not_found'],
  },
  rotateWebhookSecret: {
    id: 'rotateWebhookSecret', method: 'POST', path: '/v1/projects/{id}/webhooks/{webhook_id}/rotate-secret', hosts: ['api'],
    tag: 'Webhooks', summary: 'Replace the signing secret; for 24 hours deliveries carry signatures with both',
    auth: 'bearer', pathParams: webhookIds,
    responses: { 200: { description: 'the endpoint with its new secret', schema: webhookWithSecretSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  testWebhook: {
    id: 'testWebhook', method: 'POST', path: '/v1/projects/{id}/webhooks/{webhook_id}/test', hosts: ['api'], tag: 'Webhooks',
    summary: 'Send a webhook.test event to this endpoint now, through the outbox like any event',
    description: 'Sent also to a disabled endpoint. Its delivery shows in the delivery log.',
    auth: 'bearer', pathParams: webhookIds,
    responses: { 202: { description: 'recorded; delivered in the background', schema: webhookTestSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  listWebhookDeliveries: {
    id: 'listWebhookDeliveries', method: 'GET', path: '/v1/projects/{id}/webhooks/{webhook_id}/deliveries', hosts: ['api'],
    tag: 'Webhooks', summary: 'The delivery log of an endpoint, newest first', auth: 'bearer', pathParams: webhookIds,
    query: deliveriesQuerySchema,
    responses: { 200: { description: 'one page; next_cursor is null on the last', schema: deliveryListSchema } },
    errors: ['invalid_request', 'unauthenticated', 'not_found'],
  },
  deleteWebhook: {
    id: 'deleteWebhook', method: 'DELETE', path: '/v1/projects/{id}/webhooks/{webhook_id}', hosts: ['api'], tag: 'Webhooks',
    summary: 'Delete an endpoint and its delivery log (pending deliveries are dropped)', auth: 'bearer', pathParams: webhookIds,
    responses: { 204: { description: 'deleted' } },
    errors: ['unauthenticated', 'not_found'],
  },
} satisfies Record<string, Operation>;

export const WEBHOOKS_API_OPERATIONS: readonly Operation[] = Object.values(WEBHOOKS_API);
