import { paginate, type PageQuery } from '../core/cursor.ts';
import { ApiError, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { SubscriptionRequestRecord, SubscriptionRequestStatus, SubscriptionTransition } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { getOwnProject } from '../customers/projects.ts';
import type { QuoteStore, SubscriptionStore } from './store.ts';
import type { ProjectStore } from '../customers/store.ts';

/** A customer's request for a plan for one of its projects. */
export interface SubscriptionRequestCreate {
  readonly project_id: string;
  readonly plan: string;
  readonly quote_id?: string | undefined;
  readonly note?: string | undefined;
}

/** A subscription request as it is shown to its account and to operators. */
export interface SubscriptionRequestView {
  readonly id: string;
  readonly project_id: string;
  readonly plan: string;
  readonly quote_id: string | null;
  readonly note: string | null;
  readonly status: SubscriptionRequestStatus;
  readonly created_at: number;
  readonly updated_at: number;
  readonly decided_at: number | null;
  readonly reason: string | null;
}

/** Final states, and who moves a pending request into each (docs/billing.md, "Subscription requests"). */
export type Decision = Exclude<SubscriptionRequestStatus, 'pending'>;
export const OPERATOR_DECISIONS = ['approved', 'rejected'] as const satisfies readonly Decision[];

export const subscriptionRequestView = (r: SubscriptionRequestRecord): SubscriptionRequestView => ({
  id: r.id, project_id: r.projectId, plan: r.plan, quote_id: r.quoteId, note: r.note, status: r.status,
  created_at: r.createdAt, updated_at: r.updatedAt, decided_at: r.decidedAt, reason: r.reason,
});

/**
 * The transition rule: only a pending request moves, into one of the final states; asking for the
 * state a request already has changes nothing (a retried call succeeds); anything else is 409.
 */
export function checkTransition(current: SubscriptionRequestStatus, target: Decision): 'apply' | 'unchanged' {
  if (current === 'pending') return 'apply';
  if (current === target) return 'unchanged';
  throw new ApiError('conflict', `the subscription request is ${current}: only a pending request can become ${target}`);
}

/**
 * Asks for a plan for a project of the account. The project must be the account's (404) and not
 * archived (403); a quote, when named, must be the account's (404) and for the same plan (400);
 * a project has at most one pending request (409).
 */
export async function createSubscriptionRequest(
  deps: ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, accountId: string, body: SubscriptionRequestCreate,
): Promise<SubscriptionRequestView> {
  const project = await getOwnProject(deps, accountId, body.project_id);
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  if (body.quote_id !== undefined) {
    const quote = await deps.store.getQuote(accountId, body.quote_id);
    if (!quote) throw notFound('quote');
    const quotedPlan = (JSON.parse(quote.document) as { plan: string }).plan;
    if (quotedPlan !== body.plan) {
      throw new ApiError('invalid_request', `quote_id names a quote for plan ${quotedPlan}, not ${body.plan}`);
    }
  }
  const now = nowSec(deps.clock);
  const record: SubscriptionRequestRecord = {
    id: newId('subscriptionRequest'), accountId, projectId: project.id, plan: body.plan, quoteId: body.quote_id ?? null,
    note: body.note ?? null, status: 'pending', createdAt: now, updatedAt: now, decidedAt: null, reason: null,
  };
  if (!(await deps.store.insertSubscriptionRequest(record))) {
    throw new ApiError('conflict', 'the project already has a pending subscription request: cancel it or wait for the decision');
  }
  return subscriptionRequestView(record);
}

/** Another account's request is 404, like an unknown one. */
export async function getOwnSubscriptionRequest(deps: ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, accountId: string, id: string): Promise<SubscriptionRequestView> {
  const record = await deps.store.getSubscriptionRequest(id, accountId);
  if (!record) throw notFound('subscription request');
  return subscriptionRequestView(record);
}

export interface SubscriptionRequestQuery extends PageQuery {
  readonly project_id?: string | undefined;
  readonly status?: SubscriptionRequestStatus | undefined;
}

/** The account's requests, newest first; filtering by another account's project is 404. */
export async function listSubscriptionRequests(
  deps: ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, accountId: string, query: SubscriptionRequestQuery,
): Promise<{ subscription_requests: SubscriptionRequestView[]; next_cursor: string | null }> {
  if (query.project_id !== undefined) await getOwnProject(deps, accountId, query.project_id);
  const scope = { listing: 'subscription-requests', filters: { project_id: query.project_id, status: query.status } };
  const page = await paginate(scope, query, {
    has: async (id) => (await deps.store.getSubscriptionRequest(id, accountId)) !== undefined,
    list: (afterId, limit) => deps.store.listSubscriptionRequests(
      { accountId, projectId: query.project_id, status: query.status }, { limit, afterId },
    ),
  });
  return {
    subscription_requests: page.items.map(subscriptionRequestView),
    next_cursor: page.nextCursor,
  };
}

/** Moves a request to a final state under the transition rule; a lost race is re-checked against the winner. */
async function decide(
  deps: Pick<ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, 'store' | 'clock'>, record: SubscriptionRequestRecord, to: Decision, reason: string | null,
): Promise<SubscriptionRequestRecord> {
  if (checkTransition(record.status, to) === 'unchanged') return record;
  const transition: SubscriptionTransition = { status: to, at: nowSec(deps.clock), reason };
  const updated = await deps.store.transitionSubscriptionRequest(record.id, transition);
  if (updated) return updated;
  const current = await deps.store.getSubscriptionRequest(record.id);
  if (!current) throw notFound('subscription request');
  checkTransition(current.status, to);
  return current;
}

/** The customer withdraws a pending request. */
export async function cancelSubscriptionRequest(deps: ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, accountId: string, id: string): Promise<SubscriptionRequestView> {
  const record = await deps.store.getSubscriptionRequest(id, accountId);
  if (!record) throw notFound('subscription request');
  return subscriptionRequestView(await decide(deps, record, 'cancelled', null));
}

/** The operator's decision on a request of any account (`rtc subscriptions approve|reject`). */
export async function decideSubscriptionRequest(
  deps: Pick<ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, 'store' | 'clock'>, id: string, decision: (typeof OPERATOR_DECISIONS)[number], reason?: string,
): Promise<SubscriptionRequestView> {
  const record = await deps.store.getSubscriptionRequest(id);
  if (!record) throw notFound('subscription request');
  return subscriptionRequestView(await decide(deps, record, decision, reason ?? null));
}

/** Requests across every account for the operator, newest first. */
export async function listForOperator(
  deps: Pick<ServiceDeps<SubscriptionStore & QuoteStore & ProjectStore>, 'store'>, status: SubscriptionRequestStatus | undefined, limit: number,
): Promise<(SubscriptionRequestView & { account_id: string })[]> {
  const records = await deps.store.listSubscriptionRequests({ status }, { limit });
  return records.map((r) => ({ ...subscriptionRequestView(r), account_id: r.accountId }));
}
