/**
 * Tokens issued per project and UTC day, for the console's usage view (docs/console.md, "Usage").
 * Issuing a token only counts in memory; the counts go to the store in one batch every few
 * seconds and when the process stops, so the token API's hot path never waits on the database.
 */
import type { TokenCounter } from '../core/ports.ts';
import type { TokenCount, TokenCountStore } from './store.ts';
import type { ServiceDeps } from '../core/deps.ts';
import { nowSec } from '../core/deps.ts';
import { admitConsoleRead, getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';
import { participantMinutesPerDay, type DayMinutes } from '../sessions/history.ts';
import type { MediaSessionStore } from '../sessions/store.ts';
import type { ProjectUsage, UsageCost } from '@rtc/protocol';
import { findPlan, PRICE_LIST, type PriceList } from '../billing/catalog/price-list.ts';
import { computeQuote } from '../billing/catalog/quote.ts';
import type { SubscriptionStore } from '../billing/store.ts';

/** How many days the usage view shows, today included. */
export const USAGE_DAYS = 14;

export function dayOf(epochSec: number): string {
  return new Date(epochSec * 1000).toISOString().slice(0, 10);
}

export class TokenUsage implements TokenCounter {
  private readonly store: TokenCountStore;
  private pending = new Map<string, TokenCount>();
  private flushing: Promise<void> = Promise.resolve();

  constructor(store: TokenCountStore) {
    this.store = store;
  }

  /** One token issued for a project at `issuedAtSec`. */
  count(projectId: string, issuedAtSec: number): void {
    const day = dayOf(issuedAtSec);
    const key = `${projectId} ${day}`;
    const held = this.pending.get(key);
    this.pending.set(key, { projectId, day, count: (held?.count ?? 0) + 1 });
  }

  /** Writes what was counted since the last flush; on failure the counts wait for the next one. */
  flush(): Promise<void> {
    // a failed flush must not stop the next ones: each starts after the previous, whatever its outcome
    this.flushing = this.flushing.catch(() => undefined).then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        // in one order on every node, so that two nodes adding to the same rows never deadlock
        const rows = [...batch.values()].sort((a, b) => (a.projectId === b.projectId ? cmp(a.day, b.day) : cmp(a.projectId, b.projectId)));
        await this.store.addTokenCounts(rows);
      } catch (err) {
        for (const [key, c] of batch) {
          const held = this.pending.get(key);
          this.pending.set(key, { ...c, count: c.count + (held?.count ?? 0) });
        }
        throw err;
      }
    });
    return this.flushing;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface DayCount {
  readonly day: string;
  readonly tokens: number;
}

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
