import { deliveriesQuerySchema, webhookCreateSchema, webhookPatchSchema } from './schemas.ts';
import { idParam, requestComponent, type Operation } from '../http/registry.ts';
import { consoleOperation, projectId } from '../http/console-operation.ts';
import { deliveryListSchema, webhookListSchema, webhookSchema, webhookTestSchema, webhookWithSecretSchema } from './responses.ts';

const webhookIds = { ...projectId, webhook_id: idParam('webhook id (wh_…) of an endpoint of the project') };

/** Webhook endpoints of a project (docs/reference/webhooks.md). */
export const WEBHOOKS_API = {
  createWebhook: consoleOperation({
    id: 'createWebhook', method: 'POST', path: '/v1/projects/{id}/webhooks', tag: 'Webhooks',
    summary: 'Register an endpoint (its signing secret is shown only here and by rotate)',
    description: 'At most 10 endpoints per project. The URL must be https://, without credentials; a URL that resolves to a '
      + 'loopback, private or link-local address is refused unless the platform allows it (RTC_WEBHOOK_ALLOW_PRIVATE).',
    pathParams: projectId, body: requestComponent(webhookCreateSchema, 'WebhookCreate'),
    example: { url: 'https://example.com/rtc-webhooks', event_types: ['token.revoked', 'project.archived'], description: 'backend' },
    responses: { 201: { description: 'the endpoint with its secret', schema: webhookWithSecretSchema } },
    errors: ['project_archived', 'conflict'],
  }),
  listWebhooks: consoleOperation({
    id: 'listWebhooks', method: 'GET', path: '/v1/projects/{id}/webhooks', tag: 'Webhooks',
    summary: 'Endpoints of a project (without secrets)', pathParams: projectId,
    responses: { 200: { description: 'oldest first', schema: webhookListSchema } },
  }),
  getWebhook: consoleOperation({
    id: 'getWebhook', method: 'GET', path: '/v1/projects/{id}/webhooks/{webhook_id}', tag: 'Webhooks',
    summary: 'One endpoint (without its secret)', pathParams: webhookIds,
    responses: { 200: { description: 'the endpoint', schema: webhookSchema } },
  }),
  updateWebhook: consoleOperation({
    id: 'updateWebhook', method: 'PATCH', path: '/v1/projects/{id}/webhooks/{webhook_id}', tag: 'Webhooks',
    summary: 'Change the URL, event types, description, or enable and disable',
    description: 'A disabled endpoint gets no new events; deliveries already recorded for it are still attempted.',
    pathParams: webhookIds, body: requestComponent(webhookPatchSchema, 'WebhookPatch'),
    example: { enabled: false },
    responses: { 200: { description: 'the endpoint', schema: webhookSchema } },
  }),
  rotateWebhookSecret: consoleOperation({
    id: 'rotateWebhookSecret', method: 'POST', path: '/v1/projects/{id}/webhooks/{webhook_id}/rotate-secret',
    tag: 'Webhooks', summary: 'Replace the signing secret; for 24 hours deliveries carry signatures with both',
    pathParams: webhookIds,
    responses: { 200: { description: 'the endpoint with its new secret', schema: webhookWithSecretSchema } },
  }),
  testWebhook: consoleOperation({
    id: 'testWebhook', method: 'POST', path: '/v1/projects/{id}/webhooks/{webhook_id}/test', tag: 'Webhooks',
    summary: 'Send a webhook.test event to this endpoint now, through the outbox like any event',
    description: 'Sent also to a disabled endpoint. Its delivery shows in the delivery log.',
    pathParams: webhookIds,
    responses: { 202: { description: 'recorded; delivered in the background', schema: webhookTestSchema } },
  }),
  listWebhookDeliveries: consoleOperation({
    id: 'listWebhookDeliveries', method: 'GET', path: '/v1/projects/{id}/webhooks/{webhook_id}/deliveries',
    tag: 'Webhooks', summary: 'The delivery log of an endpoint, newest first', pathParams: webhookIds,
    query: deliveriesQuerySchema,
    responses: { 200: { description: 'one page; next_cursor is null on the last', schema: deliveryListSchema } },
  }),
  deleteWebhook: consoleOperation({
    id: 'deleteWebhook', method: 'DELETE', path: '/v1/projects/{id}/webhooks/{webhook_id}', tag: 'Webhooks',
    summary: 'Delete an endpoint and its delivery log (pending deliveries are dropped)', pathParams: webhookIds,
    responses: { 204: { description: 'deleted' } },
  }),
} satisfies Record<string, Operation>;

export const WEBHOOKS_API_OPERATIONS: readonly Operation[] = Object.values(WEBHOOKS_API);
