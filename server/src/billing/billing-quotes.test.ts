import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';

import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

interface Line {
  usage_kind: string; minutes: number; included_minutes: number; billable_minutes: number; unit_price_minor: number;
  unit_minutes: number; price_currency: string; amount_minor: number;
}
interface Quote {
  id: string; created_at: number; price_list_version: string; plan: string; currency: string; minor_units: number;
  exchange: { base_currency: string; from_currency: string; to_currency: string; from_per_base: string; to_per_base: string };
  usage: Record<string, number>;
  plan_fee: { price_minor: number; price_currency: string; amount_minor: number };
  lines: Line[];
  usage_subtotal_minor: number;
  discount: { total_minutes: number; from_minutes: number; up_to_minutes: number | null; discount_bps: number; amount_minor: number };
  total_minor: number;
  rounding: string;
}

interface Example {
  readonly name: string;
  readonly body: Record<string, unknown>;
  readonly fee: number;
  readonly lines: Readonly<Record<string, number>>;
  readonly discount: { readonly bps: number; readonly amount: number };
  readonly total: number;
}

// Worked by hand from price list 2025-06-01 (docs/billing.md): rates per 1000 minutes in US cents,
// EUR 0.92, GBP 0.79, INR 83.4, JPY 156.5 (no minor unit), KWD 0.3075 (three minor digits).
const EXAMPLES: readonly Example[] = [
  {
    // fee 4900; audio (120000-50000) * 89/1000 = 6230; video_hd (30000-10000) * 359/1000 = 7180; 150000 minutes: no discount
    name: 'USD, starter: minutes above the allowance at the plan rates',
    body: { plan: 'starter', currency: 'USD', usage: { audio: 120000, video_hd: 30000 } },
    fee: 4900, lines: { audio: 6230, video_hd: 7180 }, discount: { bps: 0, amount: 0 }, total: 18310,
  },
  {
    // 4900 * 0.92 = 4508; 6230 * 0.92 = 5731.6 -> 5732; 7180 * 0.92 = 6605.6 -> 6606
    name: 'EUR, starter: each line converted, then rounded',
    body: { plan: 'starter', currency: 'EUR', usage: { audio: 120000, video_hd: 30000 } },
    fee: 4508, lines: { audio: 5732, video_hd: 6606 }, discount: { bps: 0, amount: 0 }, total: 16846,
  },
  {
    // fee 4900 cents * 1.565 = 7668.5 yen -> 7668 (half to even, down); audio 1000 * 89/1000 = 89 cents = 139.285 -> 139;
    // video_sd 1000 * 179/1000 = 179 cents = 280.135 -> 280; turn_relay 20000 * 45/1000 = 900 cents = 1408.5 -> 1408 (even)
    name: 'JPY, starter: no minor unit, exact halves go to the even yen',
    body: { plan: 'starter', currency: 'JPY', usage: { audio: 51000, video_sd: 21000, turn_relay: 25000 } },
    fee: 7668, lines: { audio: 139, video_sd: 280, turn_relay: 1408 }, discount: { bps: 0, amount: 0 }, total: 9495,
  },
  {
    // turn_relay 60000 * 45/1000 = 2700 cents = 4225.5 yen -> 4226 (half to even, up)
    name: 'JPY, starter: an exact half with an odd floor rounds up',
    body: { plan: 'starter', currency: 'JPY', usage: { turn_relay: 65000 } },
    fee: 7668, lines: { turn_relay: 4226 }, discount: { bps: 0, amount: 0 }, total: 11894,
  },
  {
    // fee 0; audio 2000 * 99/1000 = 198 cents = 608.85 fils -> 609; turn_relay 2000 * 49/1000 = 98 cents = 301.35 -> 301
    name: 'KWD, developer: three minor digits',
    body: { plan: 'developer', currency: 'KWD', usage: { audio: 12000, turn_relay: 3000 } },
    fee: 0, lines: { audio: 609, turn_relay: 301 }, discount: { bps: 0, amount: 0 }, total: 910,
  },
  {
    // 4900 cents = 15.0675 KWD = 15067.5 fils -> 15068 (half to even, up)
    name: 'KWD, starter: the fee alone, half to even',
    body: { plan: 'starter', currency: 'KWD', usage: {} },
    fee: 15068, lines: {}, discount: { bps: 0, amount: 0 }, total: 15068,
  },
  {
    // audio 1000000 * 79/1000 = 79000; video_hd 300000 * 319/1000 = 95700; subtotal 174700;
    // 1900000 minutes: tier 5%, 8735; total 49900 + 174700 - 8735
    name: 'USD, business: the 5% volume tier on the usage subtotal only',
    body: { plan: 'business', usage: { audio: 1500000, video_hd: 400000 } },
    fee: 49900, lines: { audio: 79000, video_hd: 95700 }, discount: { bps: 500, amount: 8735 }, total: 215865,
  },
  {
    // fee 199900 * 0.79 = 157921; audio 5500000 * 69/1000 = 379500 cents = 299805 pence;
    // 8000000 minutes: tier 10%, 29980.5 -> 29980 (half to even)
    name: 'GBP, scale: the 10% tier, the discount rounded half to even',
    body: { plan: 'scale', currency: 'GBP', usage: { audio: 8000000 } },
    fee: 157921, lines: { audio: 299805 }, discount: { bps: 1000, amount: 29980 }, total: 427746,
  },
  {
    // fee 199900 * 83.4 = 16671660 paise; video_full_hd 24900000 * 629/1000 = 15662100 cents = 1306219140 paise;
    // 25000000 minutes: tier 15%, 195932871
    name: 'INR, scale: the open-ended 15% tier',
    body: { plan: 'scale', currency: 'INR', usage: { video_full_hd: 25000000 } },
    fee: 16671660, lines: { video_full_hd: 1306219140 }, discount: { bps: 1500, amount: 195932871 }, total: 1126957929,
  },
  {
    // included minutes are not billed; the plan currency is the default
    name: 'USD, developer: usage within the allowance costs nothing',
    body: { plan: 'developer', usage: { audio: 10000, video_sd: 5000, video_hd: 0 } },
    fee: 0, lines: { audio: 0, video_sd: 0, video_hd: 0 }, discount: { bps: 0, amount: 0 }, total: 0,
  },
];

describe('billing quotes', () => {
  let server: InProcessPlatform;
  let alice: Customer;
  let bob: Customer;
  const auth = (c: Customer) => ({ authorization: `Bearer ${c.accessToken}` });
  const createQuote = (c: Customer, body: unknown) => server.request(`${server.api}/v1/billing/quotes`, { headers: auth(c), body });

  before(async () => {
    server = await startInProcess();
    [alice, bob] = await Promise.all([createCustomer(server), createCustomer(server)]);
  });
  after(async () => {
    await server.close();
  });

  for (const example of EXAMPLES) {
    it(`prices by hand-computed example: ${example.name}`, async () => {
      const res = await createQuote(alice, example.body);
      assert.equal(res.status, 201, res.text);
      const q = res.json<Quote>();
      assert.equal(q.plan_fee.amount_minor, example.fee, 'monthly fee');
      assert.deepEqual(Object.fromEntries(q.lines.map((l) => [l.usage_kind, l.amount_minor])), example.lines);
      assert.equal(q.discount.discount_bps, example.discount.bps);
      assert.equal(q.discount.amount_minor, example.discount.amount);
      assert.equal(q.usage_subtotal_minor, Object.values(example.lines).reduce((a, b) => a + b, 0));
      assert.equal(q.total_minor, example.total);
      assert.equal(q.total_minor, q.plan_fee.amount_minor + q.usage_subtotal_minor - q.discount.amount_minor);
      assert.equal(q.currency, (example.body['currency'] as string | undefined) ?? 'USD');
      assert.equal(q.rounding, 'half_even_per_line');
      assert.equal(q.price_list_version, '2025-06-01');
    });
  }

  it('shows every line: minutes, allowance, billable minutes, unit price and currency, and the rates used', async () => {
    const q = (await createQuote(alice, { plan: 'starter', currency: 'EUR', usage: { turn_relay: 4000, audio: 120000 } })).json<Quote>();
    assert.match(q.id, /^quo_[A-Za-z0-9_-]{22}$/);
    assert.equal(q.created_at, Math.floor(server.clock.nowMs() / 1000));
    assert.equal(q.minor_units, 2);
    assert.deepEqual(q.exchange, {
      base_currency: 'USD', from_currency: 'USD', to_currency: 'EUR', from_per_base: '1', to_per_base: '0.92', rates_as_of: '2025-06-01',
    });
    assert.deepEqual(q.usage, { audio: 120000, turn_relay: 4000 });
    assert.deepEqual(q.lines.map((l) => l.usage_kind), ['audio', 'turn_relay'], 'price-list order');
    assert.deepEqual(q.lines[1], {
      usage_kind: 'turn_relay', description: 'TURN relay', minutes: 4000, included_minutes: 5000, billable_minutes: 0,
      unit_price_minor: 45, unit_minutes: 1000, price_currency: 'USD', amount_minor: 0,
    });
    assert.deepEqual(q.plan_fee, { description: 'Starter plan, monthly fee', price_minor: 4900, price_currency: 'USD', amount_minor: 4508 });
    assert.deepEqual(q.discount, { total_minutes: 124000, from_minutes: 0, up_to_minutes: 1000000, discount_bps: 0, amount_minor: 0 });
  });

  it('is immutable: GET returns the created quote byte for byte, and no method changes it', async () => {
    const created = await createQuote(alice, { plan: 'business', currency: 'JPY', usage: { video_2k_plus: 9000 } });
    assert.equal(created.status, 201);
    const id = created.json<Quote>().id;
    const url = `${server.api}/v1/billing/quotes/${id}`;
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const res = await server.request(url, { method, headers: auth(alice), body: { plan: 'scale', usage: {} } });
      assert.equal(res.status, 404, method);
    }
    const fetched = await server.request(url, { headers: auth(alice) });
    assert.equal(fetched.status, 200);
    assert.equal(fetched.headers['cache-control'], 'no-store');
    assert.equal(fetched.text, created.text);
  });

  it('lists the account\'s quotes newest first, losing and repeating none across pages', async () => {
    const carol = await createCustomer(server);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createQuote(carol, { plan: 'developer', usage: { audio: i } })).json<Quote>().id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? 'limit=2' : `limit=2&cursor=${cursor}`;
      const res = await server.request(`${server.api}/v1/billing/quotes?${query}`, { headers: auth(carol) });
      assert.equal(res.status, 200, res.text);
      const page = res.json<{ quotes: Quote[]; next_cursor: string | null }>();
      seen.push(...page.quotes.map((q) => q.id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null);
    assert.deepEqual(seen, [...ids].reverse());
    assert.equal(pages, 3);
    const all = (await server.request(`${server.api}/v1/billing/quotes`, { headers: auth(carol) })).json<{ quotes: Quote[]; next_cursor: null }>();
    assert.deepEqual(all.quotes.map((q) => q.id), [...ids].reverse());
    assert.equal(all.next_cursor, null);
  });

  it("keeps another account's quotes invisible: 404 like an unknown id, absent from lists, cursors refused", async () => {
    const mine = (await createQuote(alice, { plan: 'starter', usage: { audio: 1 } })).json<Quote>();
    await createQuote(alice, { plan: 'starter', usage: { audio: 2 } });
    const theirs = await server.request(`${server.api}/v1/billing/quotes/${mine.id}`, { headers: auth(bob) });
    const unknown = await server.request(`${server.api}/v1/billing/quotes/quo_AAAAAAAAAAAAAAAAAAAAAA`, { headers: auth(bob) });
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.json(), { error: 'not_found', message: 'quote not found' });
    assert.equal(theirs.text, unknown.text);
    const list = (await server.request(`${server.api}/v1/billing/quotes?limit=100`, { headers: auth(bob) })).json<{ quotes: Quote[] }>();
    assert.ok(!list.quotes.some((q) => q.id === mine.id));
    const alicePage = (await server.request(`${server.api}/v1/billing/quotes?limit=1`, { headers: auth(alice) })).json<{ next_cursor: string }>();
    const borrowed = await server.request(`${server.api}/v1/billing/quotes?limit=1&cursor=${alicePage.next_cursor}`, { headers: auth(bob) });
    assert.equal(borrowed.status, 400);
    assert.match(borrowed.json<{ message: string }>().message, /^cursor is not valid/);
  });

  it('needs a console session: none, a bad one and an App credential are 401', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer cs_forged' }, { authorization: alice.auth }];
    for (const headers of attempts) {
      const res = await server.request(`${server.api}/v1/billing/quotes`, { headers, body: { plan: 'starter', usage: {} } });
      assert.equal(res.status, 401);
      assert.equal(res.json<{ error: string }>().error, 'unauthenticated');
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="rtc"');
      assert.equal((await server.request(`${server.api}/v1/billing/quotes`, { headers })).status, 401);
    }
  });

  const MAX = 'an integer from 0 to 10000000000';
  const BAD_BODIES: readonly [string, unknown, string][] = [
    ['an array body', [], 'the request body must be a JSON object'],
    ['a missing plan', { usage: {} }, 'plan is required'],
    ['an unknown plan', { plan: 'gold', usage: {} }, 'plan must be one of developer, starter, business, scale'],
    ['a plan that is not a string', { plan: 1, usage: {} }, 'plan must be one of developer, starter, business, scale'],
    ['a lower-case currency', { plan: 'starter', currency: 'usd', usage: {} }, 'currency must be one of USD, EUR, GBP, INR, JPY, KWD'],
    ['an unlisted currency', { plan: 'starter', currency: 'CHF', usage: {} }, 'currency must be one of USD, EUR, GBP, INR, JPY, KWD'],
    ['a null currency', { plan: 'starter', currency: null, usage: {} }, 'currency must be one of USD, EUR, GBP, INR, JPY, KWD'],
    ['a missing usage', { plan: 'starter' }, 'usage is required'],
    ['a usage list', { plan: 'starter', usage: [1] }, 'usage must be an object of minutes per usage kind'],
    ['negative minutes', { plan: 'starter', usage: { audio: -1 } }, `usage.audio must be ${MAX}`],
    ['fractional minutes', { plan: 'starter', usage: { video_sd: 1.5 } }, `usage.video_sd must be ${MAX}`],
    ['minutes as a string', { plan: 'starter', usage: { video_hd: '100' } }, `usage.video_hd must be ${MAX}`],
    ['null minutes', { plan: 'starter', usage: { video_full_hd: null } }, `usage.video_full_hd must be ${MAX}`],
    ['too many minutes', { plan: 'starter', usage: { video_2k_plus: 10000000001 } }, `usage.video_2k_plus must be ${MAX}`],
    // a string is sent as it is: JSON has no Infinity, 1e400 is a number too large for a double
    ['infinite minutes', '{"plan":"starter","usage":{"turn_relay":1e400}}', `usage.turn_relay must be ${MAX}`],
    ['an unknown usage kind', { plan: 'starter', usage: { video_8k: 1 } }, 'unknown field "video_8k" in usage is not allowed'],
    ['an unknown field', { plan: 'starter', usage: {}, discount: 50 }, 'unknown field "discount" is not allowed'],
    ['a total in the request', { plan: 'starter', usage: {}, total_minor: 1 }, 'unknown field "total_minor" is not allowed'],
  ];
  for (const [rule, body, message] of BAD_BODIES) {
    it(`refuses ${rule} with 400 naming the rule`, async () => {
      const raw = typeof body === 'string' ? body : JSON.stringify(body);
      const res = await server.request(`${server.api}/v1/billing/quotes`, {
        headers: { ...auth(alice), 'content-type': 'application/json' }, body: raw,
      });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { error: 'invalid_request', message });
    });
  }

  it('refuses bodies that are not JSON objects: syntax, __proto__, type and size', async () => {
    const send = (body: string | Buffer, type = 'application/json') =>
      server.request(`${server.api}/v1/billing/quotes`, { headers: { ...auth(alice), 'content-type': type }, body });
    assert.deepEqual((await send('{"plan":')).json(), { error: 'invalid_request', message: 'the request body is not valid JSON' });
    const proto = await send('{"plan":"starter","usage":{},"__proto__":{"x":1}}');
    assert.deepEqual(proto.json(), { error: 'invalid_request', message: 'unknown field "__proto__" is not allowed' });
    assert.equal((await send('plan=starter', 'application/x-www-form-urlencoded')).status, 415);
    assert.equal((await send(Buffer.alloc(70 * 1024, 0x20))).status, 413);
  });

  const BAD_QUERIES: readonly [string, string][] = [
    ['limit=0', 'limit must be an integer from 1 to 100'],
    ['limit=101', 'limit must be an integer from 1 to 100'],
    ['limit=x', 'limit must be an integer from 1 to 100'],
    ['limit=1&limit=2', 'limit must be given once'],
    ['cursor=', 'cursor must not be empty'],
    ['cursor=abc', 'cursor is not valid for this listing: pass next_cursor of the previous page with the same filters'],
    ['plan=starter', 'unknown query parameter "plan" is not allowed'],
  ];
  for (const [query, message] of BAD_QUERIES) {
    it(`refuses the list query ${query} with 400 naming the rule`, async () => {
      const res = await server.request(`${server.api}/v1/billing/quotes?${query}`, { headers: auth(alice) });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { error: 'invalid_request', message });
    });
  }

  it('limits an account to 60 quotes a minute, with Retry-After', async () => {
    const dave = await createCustomer(server);
    const results = await Promise.all(Array.from({ length: 60 }, () => createQuote(dave, { plan: 'developer', usage: {} })));
    assert.ok(results.every((r) => r.status === 201));
    const over = await createQuote(dave, { plan: 'developer', usage: {} });
    assert.equal(over.status, 429);
    assert.equal(over.json<{ error: string }>().error, 'rate_limited');
    assert.ok(Number(over.headers['retry-after']) >= 1 && Number(over.headers['retry-after']) <= 60);
    assert.equal((await createQuote(alice, { plan: 'developer', usage: {} })).status, 201, 'other accounts are unaffected');
  });
});
