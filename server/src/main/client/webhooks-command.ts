/**
 * `rtc webhooks`: a project's webhook endpoints and their delivery log, as the stored session of
 * `rtc login` (docs/reference/cli.md, "Webhooks"; the API is docs/reference/webhooks.md).
 */
import type { WebhookDelivery, WebhookDeliveryList, WebhookEventType } from '@rtc/protocol';
import { asCustomer, JSON_FLAG, parseCommand, positional, print, required, str, type ClientIO, type Options, type Values } from './common.ts';
import { CommandError, UsageError } from './http.ts';

export const WEBHOOKS_USAGE = `  webhooks list --project ID
  webhooks create --project ID --url HTTPS_URL [--events TYPE,…] [--description D]
                 register an endpoint (every event type unless --events); its signing secret
                 is printed this once
  webhooks update WEBHOOK_ID --project ID [--url HTTPS_URL] [--events TYPE,…|all]
                 [--description D] [--enable | --disable]
  webhooks delete WEBHOOK_ID --project ID
  webhooks test WEBHOOK_ID --project ID [--wait S]
                 send a webhook.test event and report its first delivery attempt, waiting up
                 to S seconds (default 20; 0: do not wait)
  webhooks deliveries WEBHOOK_ID --project ID [--limit N] [--cursor C]
                 the delivery log, newest first`;

export const WEBHOOKS_NOTE = `Webhook commands act as the stored session of rtc login, on its platform; their --url is
  the endpoint's address (https://), never the platform's.`;

/** An endpoint as the API shows it (docs/reference/webhooks.md). */
interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  readonly event_types: readonly WebhookEventType[];
  readonly enabled: boolean;
  readonly created_at: number;
  readonly previous_secret_expires_at: number | null;
}

interface WebhookWithSecret extends Webhook {
  readonly secret: string;
}

/** The flags every subcommand takes; no `--url`: the platform is the stored session's. */
const BASE: Options = { ...JSON_FLAG, project: { type: 'string' } };
const EDIT: Options = { url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' } };
/** What asCustomer reads of the flags: nothing, since `--url` here is the endpoint's address. */
const SESSION: Values = {};
const DEFAULT_WAIT_SECONDS = 20;
/** How often `test` reads the delivery log while it waits. */
const POLL_MS = 250;

/** Rows padded into columns two spaces apart, the last column unpadded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

const time = (sec: number | null): string => (sec === null ? '-' : new Date(sec * 1000).toISOString().replace('.000Z', 'Z'));
const events = (w: Webhook): string => (w.event_types.length === 0 ? 'all' : w.event_types.join(','));

function webhookTable(list: readonly Webhook[]): string[] {
  return table(['ID', 'STATUS', 'EVENTS', 'URL', 'DESCRIPTION'],
    list.map((w) => [w.id, w.enabled ? 'enabled' : 'disabled', events(w), w.url, w.description]));
}

function deliveryTable(list: readonly WebhookDelivery[]): string[] {
  return table(['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST CODE', 'CREATED', 'LAST ERROR'], list.map((d) => [
    d.id, d.event_type, d.status, String(d.attempts), d.last_status_code === null ? '-' : String(d.last_status_code),
    time(d.created_at), d.last_error ?? '',
  ]));
}

/** `--events a,b` as the API's event_types; `all` (or nothing between the commas) is every type. */
function eventTypes(values: Values): string[] | undefined {
  const text = str(values, 'events');
  if (text === undefined) return undefined;
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  return list.length === 1 && list[0] === 'all' ? [] : list;
}

function wholeNumber(command: string, values: Values, flag: string, what: string): number | undefined {
  const text = str(values, flag);
  if (text === undefined) return undefined;
  if (!/^\d{1,6}$/.test(text)) throw new UsageError(`${command}: --${flag} takes ${what}`);
  return Number(text);
}

/** One subcommand's flags parsed, its project's path and, for the subcommands that name one, the endpoint's. */
function parse(command: string, args: readonly string[], extra: Options, withWebhook: boolean) {
  const { values, positionals } = parseCommand(command, args, { ...BASE, ...extra }, withWebhook ? 1 : 0);
  const project = `/v1/projects/${encodeURIComponent(required(command, values, 'project'))}/webhooks`;
  const webhookId = withWebhook ? positional(command, positionals, 0, 'WEBHOOK_ID') : '';
  return { values, webhookId, path: withWebhook ? `${project}/${encodeURIComponent(webhookId)}` : project, json: values['json'] === true };
}

async function create(command: string, args: readonly string[], io: ClientIO): Promise<number> {
  const { values, path, json } = parse(command, args, EDIT, false);
  const url = required(command, values, 'url');
  const types = eventTypes(values);
  const description = str(values, 'description');
  const body = await asCustomer<WebhookWithSecret>(io, SESSION, path, {
    body: { url, ...(types === undefined ? {} : { event_types: types }), ...(description === undefined ? {} : { description }) },
  });
  print(io, json, body, () => [
    ...webhookTable([body]),
    '',
    `signing secret: ${body.secret}`,
    'The signing secret is shown this once and will not be shown again: keep it in your secret store.',
  ]);
  return 0;
}

async function update(command: string, args: readonly string[], io: ClientIO): Promise<number> {
  const { values, path, json } = parse(command, args, { ...EDIT, enable: { type: 'boolean' }, disable: { type: 'boolean' } }, true);
  if (values['enable'] === true && values['disable'] === true) throw new UsageError(`${command}: --enable and --disable exclude each other`);
  const types = eventTypes(values);
  const change = {
    ...(str(values, 'url') === undefined ? {} : { url: str(values, 'url') }),
    ...(types === undefined ? {} : { event_types: types }),
    ...(str(values, 'description') === undefined ? {} : { description: str(values, 'description') }),
    ...(values['enable'] === true ? { enabled: true } : values['disable'] === true ? { enabled: false } : {}),
  };
  if (Object.keys(change).length === 0) {
    throw new UsageError(`${command}: nothing to change (--url, --events, --description, --enable or --disable)`);
  }
  const body = await asCustomer<Webhook>(io, SESSION, path, { method: 'PATCH', body: change });
  print(io, json, body, () => webhookTable([body]));
  return 0;
}

function deliveryOutcome(d: WebhookDelivery): string {
  if (d.status === 'delivered') return `delivered: answered ${d.last_status_code ?? '-'} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`;
  const why = d.last_error ?? (d.last_status_code === null ? 'no answer' : `answered ${d.last_status_code}`);
  if (d.status === 'failed') return `failed after ${d.attempts} attempts: ${why}`;
  return `not delivered yet (${d.attempts} attempt${d.attempts === 1 ? '' : 's'}): ${why}; next attempt at ${time(d.next_attempt_at)}`;
}

/** Sends the test event, then reads the delivery log until its first attempt is over or `--wait` runs out. */
async function test(command: string, args: readonly string[], io: ClientIO): Promise<number> {
  const { values, path, json } = parse(command, args, { wait: { type: 'string' } }, true);
  const waitSec = wholeNumber(command, values, 'wait', 'a whole number of seconds') ?? DEFAULT_WAIT_SECONDS;
  const { event_id: eventId } = await asCustomer<{ event_id: string }>(io, SESSION, `${path}/test`, { method: 'POST' });
  const deadline = io.nowSec() + waitSec;
  let delivery: WebhookDelivery | undefined;
  while (waitSec > 0) {
    const log = await asCustomer<WebhookDeliveryList>(io, SESSION, `${path}/deliveries?limit=100`);
    delivery = log.deliveries.find((d) => d.event_id === eventId);
    if ((delivery && (delivery.status !== 'pending' || delivery.attempts > 0)) || io.nowSec() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  print(io, json, { event_id: eventId, delivery: delivery ?? null }, () => [
    `sent webhook.test event ${eventId}`,
    ...(delivery ? deliveryTable([delivery]) : []),
  ]);
  if (waitSec === 0) return 0;
  if (!delivery || (delivery.status === 'pending' && delivery.attempts === 0)) {
    throw new CommandError(`${command}: no delivery attempt of ${eventId} ended within ${waitSec} s; see rtc webhooks deliveries`);
  }
  if (!json) io.out(deliveryOutcome(delivery));
  if (delivery.status !== 'delivered') throw new CommandError(`${command}: ${eventId} was not delivered: ${deliveryOutcome(delivery)}`);
  return 0;
}

export async function webhooks(args: readonly string[], io: ClientIO): Promise<number> {
  const [sub, ...rest] = args;
  const command = `webhooks ${sub ?? ''}`.trim();
  if (sub === 'list') {
    const { path, json } = parse(command, rest, {}, false);
    const body = await asCustomer<{ webhooks: readonly Webhook[] }>(io, SESSION, path);
    print(io, json, body, () => (body.webhooks.length === 0 ? ['no webhooks'] : webhookTable(body.webhooks)));
    return 0;
  }
  if (sub === 'create') return create(command, rest, io);
  if (sub === 'update') return update(command, rest, io);
  if (sub === 'delete') {
    const { webhookId, path, json } = parse(command, rest, {}, true);
    await asCustomer(io, SESSION, path, { method: 'DELETE' });
    print(io, json, { deleted: true, id: webhookId }, () => [`deleted ${webhookId}`]);
    return 0;
  }
  if (sub === 'test') return test(command, rest, io);
  if (sub === 'deliveries') {
    const { values, path, json } = parse(command, rest, { limit: { type: 'string' }, cursor: { type: 'string' } }, true);
    const limit = wholeNumber(command, values, 'limit', 'a whole number from 1 to 100');
    const cursor = str(values, 'cursor');
    const query = new URLSearchParams({ ...(limit === undefined ? {} : { limit: String(limit) }), ...(cursor === undefined ? {} : { cursor }) });
    const body = await asCustomer<WebhookDeliveryList>(io, SESSION, `${path}/deliveries${query.toString() === '' ? '' : `?${query}`}`);
    print(io, json, body, () => [
      ...(body.deliveries.length === 0 ? ['no deliveries'] : deliveryTable(body.deliveries)),
      ...(body.next_cursor === null ? [] : ['', `more: --cursor ${body.next_cursor}`]),
    ]);
    return 0;
  }
  throw new UsageError(`webhooks: unknown subcommand ${JSON.stringify(sub ?? '')} (list, create, update, delete, test, deliveries)`);
}
