import type { FastifyInstance } from 'fastify';
import {
  createWebhook, deleteWebhook, getOwnWebhook, listDeliveries, listWebhooks, rotateWebhookSecret, sendTestEvent,
  updateWebhook, webhookView,
} from './endpoints.ts';
import type { HttpContext } from '../http/context.ts';
import { WEBHOOKS_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { requireSession } from '../customers/auth-routes.ts';
import type { AccountStore, ProjectStore } from '../customers/store.ts';
import type { WebhookStore } from './store.ts';

/** docs/reference/webhooks.md: a project's endpoints; the signing secret is shown only by create and rotate. */
export function registerWebhookRoutes(app: FastifyInstance, ctx: HttpContext<WebhookStore & ProjectStore & AccountStore>): void {
  const session = { onRequest: requireSession(ctx) };
  const { deps } = ctx;

  registerOperation(app, WEBHOOKS_API.createWebhook, async (req, reply, input) =>
    reply.code(201).send(await createWebhook(deps, req.accountId, input.params.id, input.body())), session);

  registerOperation(app, WEBHOOKS_API.listWebhooks, async (req, reply, input) =>
    reply.send({ webhooks: await listWebhooks(deps, req.accountId, input.params.id) }), session);

  registerOperation(app, WEBHOOKS_API.getWebhook, async (req, reply, { params }) =>
    reply.send(webhookView(await getOwnWebhook(deps, req.accountId, params.id, params.webhook_id), deps.clock.nowMs())), session);

  registerOperation(app, WEBHOOKS_API.updateWebhook, async (req, reply, input) =>
    reply.send(await updateWebhook(deps, req.accountId, input.params.id, input.params.webhook_id, input.body())), session);

  registerOperation(app, WEBHOOKS_API.deleteWebhook, async (req, reply, { params }) => {
    await deleteWebhook(deps, req.accountId, params.id, params.webhook_id);
    return reply.code(204).send();
  }, session);

  registerOperation(app, WEBHOOKS_API.rotateWebhookSecret, async (req, reply, { params }) =>
    reply.send(await rotateWebhookSecret(deps, req.accountId, params.id, params.webhook_id)), session);

  registerOperation(app, WEBHOOKS_API.testWebhook, async (req, reply, { params }) =>
    reply.code(202).send(await sendTestEvent(deps, req.accountId, params.id, params.webhook_id)), session);

  registerOperation(app, WEBHOOKS_API.listWebhookDeliveries, async (req, reply, input) =>
    reply.send(await listDeliveries(deps, req.accountId, input.params.id, input.params.webhook_id, input.query)), session);
}
