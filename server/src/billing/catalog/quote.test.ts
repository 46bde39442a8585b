import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_QUOTE_MINUTES, PRICE_LIST } from './price-list.ts';
import { computeQuote, type UsageMinutes } from './quote.ts';

const plans = PRICE_LIST.plans.map((p) => p.id);
const currencies = PRICE_LIST.currencies.map((c) => c.code);
const kinds = PRICE_LIST.usage_kinds.map((k) => k.id);

const minutes = fc.oneof(fc.integer({ min: 0, max: 3_000_000 }), fc.integer({ min: 0, max: MAX_QUOTE_MINUTES }));
const usage: fc.Arbitrary<UsageMinutes> = fc.record(Object.fromEntries(kinds.map((k) => [k, minutes])), { requiredKeys: [] });
const input = fc.record({ plan: fc.constantFrom(...plans), currency: fc.constantFrom(...currencies), usage });

describe('computeQuote: every figure adds up', () => {
  it('total = fee + sum of lines - discount, all non-negative integers', () => {
    fc.assert(fc.property(input, (q) => {
      const quote = computeQuote(PRICE_LIST, q);
      const sum = quote.lines.reduce((s, l) => s + l.amount_minor, 0);
      assert.equal(quote.usage_subtotal_minor, sum);
      assert.equal(quote.total_minor, quote.plan_fee.amount_minor + quote.usage_subtotal_minor - quote.discount.amount_minor);
      for (const value of [quote.total_minor, quote.discount.amount_minor, quote.plan_fee.amount_minor, ...quote.lines.map((l) => l.amount_minor)]) {
        assert.ok(Number.isSafeInteger(value) && value >= 0);
      }
      assert.ok(quote.discount.amount_minor <= quote.usage_subtotal_minor);
    }), { numRuns: 300 });
  });

  it('quotes one line per usage kind asked for, in price-list order, and counts minutes above the allowance', () => {
    fc.assert(fc.property(input, (q) => {
      const quote = computeQuote(PRICE_LIST, q);
      assert.deepEqual(quote.lines.map((l) => l.usage_kind), kinds.filter((k) => q.usage[k] !== undefined));
      for (const line of quote.lines) assert.equal(line.billable_minutes, Math.max(0, line.minutes - line.included_minutes));
      const total = Object.values(q.usage).reduce<number>((s, m) => s + (m ?? 0), 0);
      assert.equal(quote.discount.total_minutes, total);
      assert.ok(total >= quote.discount.from_minutes && (quote.discount.up_to_minutes === null || total < quote.discount.up_to_minutes));
    }), { numRuns: 200 });
  });

  it('in the plan currency, each line is billable * price / unit rounded half to even, with no conversion', () => {
    fc.assert(fc.property(fc.constantFrom(...plans), usage, (planId, u) => {
      const plan = PRICE_LIST.plans.find((p) => p.id === planId)!;
      const quote = computeQuote(PRICE_LIST, { plan: planId, usage: u });
      assert.equal(quote.currency, plan.currency);
      assert.equal(quote.plan_fee.amount_minor, plan.monthly_fee_minor);
      for (const line of quote.lines) {
        const exact = BigInt(line.billable_minutes) * BigInt(line.unit_price_minor);
        const q = exact / 1000n;
        const r = exact % 1000n;
        const rounded = r > 500n || (r === 500n && q % 2n === 1n) ? q + 1n : q;
        assert.equal(BigInt(line.amount_minor), rounded);
      }
    }), { numRuns: 200 });
  });

  it('never charges less for more minutes', () => {
    fc.assert(fc.property(input, fc.constantFrom(...kinds), fc.integer({ min: 1, max: 1_000_000 }), (q, kind, more) => {
      const base = computeQuote(PRICE_LIST, q);
      const before = q.usage[kind] ?? 0;
      const grown = computeQuote(PRICE_LIST, { ...q, usage: { ...q.usage, [kind]: Math.min(MAX_QUOTE_MINUTES, before + more) } });
      const line = (x: typeof base) => x.lines.find((l) => l.usage_kind === kind)?.amount_minor ?? 0;
      assert.ok(line(grown) >= line(base));
    }), { numRuns: 200 });
  });
});
