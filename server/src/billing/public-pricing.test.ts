import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

interface Plans {
  price_list_version: string;
  plans: { id: string; name: string; currency: string; monthly_fee_minor: number; included_minutes: Record<string, number> }[];
}
interface Rates {
  price_list_version: string;
  unit_minutes: number;
  usage_kinds: { id: string; medium: string; max_pixels: number | null }[];
  rates: { plan: string; usage_kind: string; currency: string; unit_price_minor: number; per_minute: string }[];
}
interface Discount {
  price_list_version: string;
  basis: string;
  applies_to: string;
  tiers: { from_minutes: number; up_to_minutes: number | null; discount_bps: number }[];
}
interface Currencies {
  price_list_version: string;
  base_currency: string;
  rates_as_of: string;
  currencies: { code: string; name: string; minor_units: number; per_base: string }[];
}

describe('public API: pricing is one coherent price list', () => {
  let server: InProcessPlatform;
  let plans: Plans;
  let rates: Rates;
  let discount: Discount;
  let currencies: Currencies;

  before(async () => {
    server = await startInProcess();
    const get = async <T>(path: string): Promise<T> => {
      const res = await server.request(`${server.api}/v1/public/pricing/${path}`);
      assert.equal(res.status, 200, res.text);
      return res.json<T>();
    };
    [plans, rates, discount, currencies] = await Promise.all([
      get<Plans>('plans'), get<Rates>('rates'), get<Discount>('discount'), get<Currencies>('currencies'),
    ]);
  });
  after(async () => {
    await server.close();
  });

  it('names one price-list version in all four documents', () => {
    assert.match(plans.price_list_version, /^\d{4}-\d{2}-\d{2}$/);
    for (const doc of [rates, discount, currencies]) assert.equal(doc.price_list_version, plans.price_list_version);
  });

  it("lists every plan's currency among the currencies", () => {
    const codes = new Set(currencies.currencies.map((c) => c.code));
    assert.ok(plans.plans.length >= 2);
    for (const plan of plans.plans) assert.ok(codes.has(plan.currency), `${plan.id}: ${plan.currency}`);
    for (const rate of rates.rates) assert.ok(codes.has(rate.currency), `${rate.plan}/${rate.usage_kind}: ${rate.currency}`);
  });

  it('prices every usage kind in every plan exactly once, in the plan currency', () => {
    const kinds = rates.usage_kinds.map((k) => k.id);
    assert.equal(new Set(kinds).size, kinds.length);
    for (const plan of plans.plans) {
      const ofPlan = rates.rates.filter((r) => r.plan === plan.id);
      assert.deepEqual(ofPlan.map((r) => r.usage_kind).sort(), [...kinds].sort(), plan.id);
      for (const rate of ofPlan) assert.equal(rate.currency, plan.currency);
      assert.deepEqual(Object.keys(plan.included_minutes).sort(), [...kinds].sort(), `included minutes of ${plan.id}`);
    }
    assert.equal(rates.rates.length, plans.plans.length * kinds.length, 'no rate of an unknown plan');
  });

  it('has audio, video by resolution tier and TURN relay usage kinds', () => {
    assert.ok(rates.usage_kinds.some((k) => k.medium === 'audio'));
    assert.ok(rates.usage_kinds.some((k) => k.medium === 'relay'));
    const video = rates.usage_kinds.filter((k) => k.medium === 'video');
    assert.ok(video.length >= 3);
    const bounded = video.map((k) => k.max_pixels).filter((p): p is number => p !== null);
    assert.deepEqual(bounded, [...bounded].sort((a, b) => a - b), 'tiers ordered by resolution');
    assert.equal(video[video.length - 1]!.max_pixels, null, 'the top tier is open-ended');
  });

  it('states each per-minute price exactly: unit_price_minor / unit_minutes in major units', () => {
    const digits = new Map(currencies.currencies.map((c) => [c.code, c.minor_units]));
    for (const rate of rates.rates) {
      const scale = rates.unit_minutes * 10 ** digits.get(rate.currency)!;
      // e.g. 89 cents per 1000 minutes is "0.00089" dollars a minute
      assert.ok(Math.abs(Number(rate.per_minute) * scale - rate.unit_price_minor) < 1e-6, `${rate.plan}/${rate.usage_kind}`);
      assert.match(rate.per_minute, /^\d+(\.\d*[1-9])?$/);
    }
    const starterAudio = rates.rates.find((r) => r.plan === 'starter' && r.usage_kind === 'audio')!;
    assert.deepEqual(starterAudio, { plan: 'starter', usage_kind: 'audio', currency: 'USD', unit_price_minor: 89, per_minute: '0.00089' });
  });

  it('orders discount tiers from zero, contiguous, non-overlapping, the last one open-ended', () => {
    assert.equal(discount.basis, 'total_minutes');
    assert.equal(discount.applies_to, 'usage_subtotal');
    const tiers = discount.tiers;
    assert.equal(tiers[0]!.from_minutes, 0);
    for (let i = 0; i < tiers.length; i++) {
      const tier = tiers[i]!;
      const next = tiers[i + 1];
      if (next) {
        assert.notEqual(tier.up_to_minutes, null);
        assert.ok(tier.up_to_minutes! > tier.from_minutes);
        assert.equal(next.from_minutes, tier.up_to_minutes, `tier ${i + 1} starts where tier ${i} ends`);
        assert.ok(next.discount_bps >= tier.discount_bps);
      } else {
        assert.equal(tier.up_to_minutes, null);
      }
      assert.ok(Number.isInteger(tier.discount_bps) && tier.discount_bps >= 0 && tier.discount_bps <= 10000);
    }
  });

  it('lists currencies with 0 and 2 minor digits and exact decimal exchange rates against the base', () => {
    const byCode = new Map(currencies.currencies.map((c) => [c.code, c]));
    assert.equal(byCode.get(currencies.base_currency)?.per_base, '1');
    assert.equal(byCode.get('JPY')?.minor_units, 0);
    assert.equal(byCode.get('USD')?.minor_units, 2);
    assert.equal(byCode.get('EUR')?.minor_units, 2);
    for (const c of currencies.currencies) {
      assert.match(c.code, /^[A-Z]{3}$/);
      assert.match(c.per_base, /^(0|[1-9]\d*)(\.\d+)?$/, c.code);
      assert.ok(Number(c.per_base) > 0);
    }
    assert.equal(new Set(currencies.currencies.map((c) => c.code)).size, currencies.currencies.length);
  });

  it('quotes money as integers of minor units', () => {
    for (const plan of plans.plans) assert.ok(Number.isSafeInteger(plan.monthly_fee_minor) && plan.monthly_fee_minor >= 0);
    for (const rate of rates.rates) assert.ok(Number.isSafeInteger(rate.unit_price_minor) && rate.unit_price_minor >= 0);
    assert.equal(plans.plans.find((p) => p.id === 'starter')?.monthly_fee_minor, 4900);
  });
});
