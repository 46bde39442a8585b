/**
 * The console's usage view (docs/console.md, "Usage"): a project's tokens and participant minutes per
 * day, and what the minutes cost on its plan, priced by the quote API's own function.
 */
import type { ProjectUsage, UsageCost } from '@rtc/protocol';
import type { ServiceDeps } from '../core/deps.ts';
import { nowSec } from '../core/deps.ts';
import { admitConsoleRead, getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';
import { participantMinutesPerDay, type DayMinutes } from '../sessions/history.ts';
import type { MediaSessionStore } from '../sessions/store.ts';
import type { TokenCountStore } from '../tokens/store.ts';
import { dayOf } from '../tokens/usage.ts';
import { findPlan, PRICE_LIST, type PriceList } from './catalog/price-list.ts';
import { computeQuote } from './catalog/quote.ts';
import type { SubscriptionStore } from './store.ts';

/** How many days the usage view shows, today included. */
export const USAGE_DAYS = 14;

/**
 * The project's tokens and participant minutes per day over the last `USAGE_DAYS` days, oldest first,
 * days without any as 0, and what those minutes would cost on its plan (docs/console.md, "Usage").
 */
export async function projectUsage(
  deps: ServiceDeps<TokenCountStore & ProjectStore & MediaSessionStore & SubscriptionStore>, accountId: string, projectId: string,
): Promise<ProjectUsage> {
  const project = await getOwnProject(deps, accountId, projectId);
  await admitConsoleRead(deps, accountId);
  // this process's own counts are current; other processes' arrive within their flush interval
  await deps.tokenUsage?.flush().catch(() => undefined);
  const today = nowSec(deps.clock);
  const days = Array.from({ length: USAGE_DAYS }, (_, i) => dayOf(today - (USAGE_DAYS - 1 - i) * 86_400));
  const counts = new Map((await deps.store.listTokenCounts(project.id, days[0]!)).map((c) => [c.day, c.count]));
  const firstDayStart = Math.floor(today / 86_400) * 86_400 - (USAGE_DAYS - 1) * 86_400;
  const [minutes, plan] = await Promise.all([
    participantMinutesPerDay(deps, PRICE_LIST, project.id, firstDayStart, days),
    projectPlan(deps, PRICE_LIST, project.id),
  ]);
  return {
    tokens_per_day: days.map((day) => ({ day, tokens: counts.get(day) ?? 0 })),
    participant_minutes_per_day: minutes,
    cost: usageCost(PRICE_LIST, plan, minutes),
  };
}

/**
 * The plan a project's minutes are priced on: that of its newest approved subscription request,
 * else the price list's first plan (developer), the one a project without a subscription is on.
 */
export async function projectPlan(
  deps: ServiceDeps<SubscriptionStore>, list: PriceList, projectId: string,
): Promise<{ readonly plan: string; readonly source: UsageCost['plan_source'] }> {
  const [approved] = await deps.store.listSubscriptionRequests({ projectId, status: 'approved' }, { limit: 1 });
  if (approved && findPlan(list, approved.plan)) return { plan: approved.plan, source: 'subscription' };
  return { plan: list.plans[0]!.id, source: 'default' };
}

/**
 * What the period's minutes would cost on `plan`, priced by the quote API's own function
 * (docs/billing.md): the same figures `POST /v1/billing/quotes` answers for the same plan and minutes.
 */
export function usageCost(
  list: PriceList, plan: { readonly plan: string; readonly source: UsageCost['plan_source'] }, days: readonly DayMinutes[],
): UsageCost {
  const usage: Record<string, number> = {};
  for (const kind of list.usage_kinds) usage[kind.id] = days.reduce((sum, d) => sum + (d.minutes_by_kind[kind.id] ?? 0), 0);
  const quote = computeQuote(list, { plan: plan.plan, usage });
  return {
    plan: quote.plan, plan_source: plan.source, from_day: days[0]?.day ?? '', to_day: days[days.length - 1]?.day ?? '',
    usage: quote.usage, currency: quote.currency, minor_units: quote.minor_units, price_list_version: quote.price_list_version,
    plan_fee_minor: quote.plan_fee.amount_minor, usage_subtotal_minor: quote.usage_subtotal_minor,
    discount_minor: quote.discount.amount_minor, total_minor: quote.total_minor,
  };
}
