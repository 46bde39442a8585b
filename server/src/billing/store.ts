import type { PageRequest } from '../core/ports.ts';

/** The billing module's records and its slices of the store: quotes and subscription requests. */

/** A priced quote; immutable once stored (docs/billing.md). */
export interface QuoteRecord {
  readonly id: string;
  readonly accountId: string;
  readonly priceListVersion: string;
  readonly createdAt: number;
  /** The quote exactly as shown to the customer (JSON), fixed at creation. */
  readonly document: string;
}

export type SubscriptionRequestStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';

/** A customer's request to put a project on a plan; an operator approves or rejects it. */
export interface SubscriptionRequestRecord {
  readonly id: string;
  readonly accountId: string;
  readonly projectId: string;
  readonly plan: string;
  readonly quoteId: string | null;
  readonly note: string | null;
  readonly status: SubscriptionRequestStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When it left `pending`. */
  readonly decidedAt: number | null;
  /** The operator's reason for a rejection. */
  readonly reason: string | null;
}

export interface SubscriptionRequestFilter {
  /** Undefined: every account (operator views). */
  readonly accountId?: string | undefined;
  readonly projectId?: string | undefined;
  readonly status?: SubscriptionRequestStatus | undefined;
}

export interface SubscriptionTransition {
  readonly status: Exclude<SubscriptionRequestStatus, 'pending'>;
  readonly at: number;
  readonly reason?: string | null | undefined;
}

/** An account's priced quotes. */
export interface QuoteStore {
  insertQuote(quote: QuoteRecord): Promise<void>;
  getQuote(accountId: string, id: string): Promise<QuoteRecord | undefined>;
  /** An account's quotes, newest first. */
  listQuotes(accountId: string, page: PageRequest): Promise<QuoteRecord[]>;
}

/** Requests to put a project on a plan, and their decisions. */
export interface SubscriptionStore {
  /** False when the project already has a pending request (at most one pending request per project). */
  insertSubscriptionRequest(request: SubscriptionRequestRecord): Promise<boolean>;
  /** By id; with an account id, only that account's request. */
  getSubscriptionRequest(id: string, accountId?: string): Promise<SubscriptionRequestRecord | undefined>;
  /** Newest first. */
  listSubscriptionRequests(filter: SubscriptionRequestFilter, page: PageRequest): Promise<SubscriptionRequestRecord[]>;
  /** Moves a pending request to a final state; undefined when it was not pending (a race lost or a final state). */
  transitionSubscriptionRequest(id: string, to: SubscriptionTransition): Promise<SubscriptionRequestRecord | undefined>;
}

export interface BillingStore extends QuoteStore, SubscriptionStore {}
