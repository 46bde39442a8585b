import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { ApiError } from '../core/errors.ts';
import type { SubscriptionRequestStatus } from '../billing/store.ts';
import type { Clock } from '../core/ports.ts';
import { SUBSCRIPTION_STATUSES, MAX_NOTE_LENGTH } from '../billing/schemas.ts';
import { decideSubscriptionRequest, listForOperator } from '../billing/subscriptions.ts';
import { openStore } from '../store/open-store.ts';

export const SUBSCRIPTIONS_USAGE = `  subscriptions list [--status S] [--limit N]
                 subscription requests of every account, newest first (JSON lines)
  subscriptions approve <id>
  subscriptions reject <id> [--reason TEXT]
                 decide a pending subscription request (docs/billing.md)`;

const MAX_LIST = 1000;

export interface CommandOutput {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/**
 * `rtc subscriptions …`: the operator's side of subscription requests, run on the data of
 * RTC_DATA_DIR (also while `rtc serve` uses it). Exit codes: 0 done, 1 refused, 2 bad usage.
 */
export async function runSubscriptionsCommand(
  args: readonly string[], config: Config, clock: Clock, io: CommandOutput,
): Promise<number> {
  let parsed: ReturnType<typeof parseSubscriptionArgs>;
  try {
    parsed = parseSubscriptionArgs(args);
  } catch (err) {
    io.err(`rtc subscriptions: ${err instanceof Error ? err.message : String(err)}\n\n${SUBSCRIPTIONS_USAGE}`);
    return 2;
  }
  // an operator pointing at the wrong directory gets told so, not a fresh empty data file
  if (config.store.kind === 'sqlite' && !existsSync(config.store.path)) {
    io.err(`rtc subscriptions: no platform data at ${config.store.path} (set RTC_DATA_DIR)`);
    return 1;
  }
  const store = await openStore(config.store);
  try {
    if (parsed.action === 'list') {
      for (const request of await listForOperator({ store }, parsed.status, parsed.limit)) io.out(JSON.stringify(request));
      return 0;
    }
    const decided = await decideSubscriptionRequest({ store, clock }, parsed.id, parsed.action, parsed.reason);
    io.out(JSON.stringify(decided));
    return 0;
  } catch (err) {
    if (err instanceof ApiError) {
      io.err(`rtc subscriptions ${args[0] ?? ''}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}

type ParsedArgs =
  | { action: 'list'; status: SubscriptionRequestStatus | undefined; limit: number }
  | { action: 'approved' | 'rejected'; id: string; reason: string | undefined };

function parseSubscriptionArgs(args: readonly string[]): ParsedArgs {
  const [verb, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest, allowPositionals: true, strict: true,
    options: { status: { type: 'string' }, limit: { type: 'string' }, reason: { type: 'string' } },
  });
  if (verb === 'list') {
    if (positionals.length > 0 || values.reason !== undefined) throw new Error('list takes only --status and --limit');
    const status = values.status;
    if (status !== undefined && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(status)) {
      throw new Error(`--status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`);
    }
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) throw new Error(`--limit must be an integer from 1 to ${MAX_LIST}`);
    return { action: 'list', status: status as SubscriptionRequestStatus | undefined, limit };
  }
  if (verb === 'approve' || verb === 'reject') {
    if (positionals.length !== 1 || !positionals[0]) throw new Error(`${verb} takes one subscription request id`);
    if (values.status !== undefined || values.limit !== undefined) throw new Error(`${verb} takes only an id and --reason`);
    if (verb === 'approve' && values.reason !== undefined) throw new Error('--reason goes with reject');
    const reason = values.reason?.trim();
    if (reason !== undefined && (reason.length === 0 || reason.length > MAX_NOTE_LENGTH)) {
      throw new Error(`--reason must be 1 to ${MAX_NOTE_LENGTH} characters`);
    }
    return { action: verb === 'approve' ? 'approved' : 'rejected', id: positionals[0], reason };
  }
  throw new Error(`unknown subscriptions command ${JSON.stringify(verb ?? '')}`);
}
