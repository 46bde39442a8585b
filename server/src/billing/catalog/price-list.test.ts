import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CatalogError } from './catalog-error.ts';
import { parseMarketplace } from './marketplace.ts';
import rawMarketplace from './marketplace.v1.json' with { type: 'json' };
import { parsePlatform } from './platform.ts';
import rawPlatform from './platform.v1.json' with { type: 'json' };
import { discountTierFor, parsePriceList, PRICE_LIST } from './price-list.ts';
import rawPriceList from './price-list.v1.json' with { type: 'json' };

type Mutable = Record<string, unknown> & {
  currencies: Record<string, unknown>[]; usage_kinds: Record<string, unknown>[];
  plans: (Record<string, unknown> & { included_minutes: Record<string, number>; unit_prices_minor: Record<string, number> })[];
  volume_discount: { tiers: Record<string, unknown>[] };
};

const fresh = (): Mutable => structuredClone(rawPriceList) as unknown as Mutable;

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof CatalogError, String(err));
    return err.problems;
  }
  assert.fail('the data was accepted');
}

interface Row { readonly rule: string; readonly mutate: (list: Mutable) => void; readonly problem: RegExp }

// each coherence rule of the price list, broken once
const RULES: readonly Row[] = [
  { rule: 'every plan currency is listed', mutate: (l) => { l.plans[1]!['currency'] = 'CHF'; }, problem: /plan starter: currency CHF is not listed/ },
  { rule: 'every usage kind is priced in every plan', mutate: (l) => { delete l.plans[2]!.unit_prices_minor['video_hd']; },
    problem: /plan business: unit_prices_minor lacks video_hd/ },
  { rule: 'every usage kind has included minutes in every plan', mutate: (l) => { delete l.plans[0]!.included_minutes['audio']; },
    problem: /plan developer: included_minutes lacks audio/ },
  { rule: 'a plan prices no unknown usage kind', mutate: (l) => { l.plans[3]!.unit_prices_minor['video_8k'] = 1; },
    problem: /plan scale: unit_prices_minor names unknown usage kinds video_8k/ },
  { rule: 'discount tiers do not overlap', mutate: (l) => { l.volume_discount.tiers[1]!['from_minutes'] = 900000; },
    problem: /tier 1 must start where tier 0 ends \(1000000\)/ },
  { rule: 'discount tiers leave no gap', mutate: (l) => { l.volume_discount.tiers[2]!['from_minutes'] = 6000000; },
    problem: /tier 2 must start where tier 1 ends/ },
  { rule: 'discount tiers start at 0', mutate: (l) => { l.volume_discount.tiers[0]!['from_minutes'] = 10; },
    problem: /first discount tier must start at 0/ },
  { rule: 'the last discount tier is open-ended', mutate: (l) => { l.volume_discount.tiers[3]!['up_to_minutes'] = 50000000; },
    problem: /last discount tier must be open-ended/ },
  { rule: 'a tier ends above where it starts', mutate: (l) => { l.volume_discount.tiers[1]!['up_to_minutes'] = 1000000; },
    problem: /tier 1: up_to_minutes must be above from_minutes/ },
  { rule: 'a larger tier never gives less', mutate: (l) => { l.volume_discount.tiers[3]!['discount_bps'] = 100; },
    problem: /tier 3 gives less than tier 2/ },
  { rule: 'currencies are listed once', mutate: (l) => { l.currencies.push({ ...l.currencies[1]! }); }, problem: /currency EUR is listed twice/ },
  { rule: 'the base currency is listed', mutate: (l) => { l['base_currency'] = 'CHF'; }, problem: /base_currency CHF is not listed/ },
  { rule: 'the base currency has rate 1', mutate: (l) => { l.currencies[0]!['per_base'] = '1.01'; }, problem: /base currency USD must have per_base 1/ },
  { rule: 'an exchange rate is above zero', mutate: (l) => { l.currencies[2]!['per_base'] = '0'; }, problem: /GBP: per_base must be above zero/ },
  { rule: 'an exchange rate is an exact decimal string', mutate: (l) => { l.currencies[2]!['per_base'] = 0.79; }, problem: /currencies\.2\.per_base/ },
  { rule: 'plans are listed once', mutate: (l) => { l.plans.push(structuredClone(l.plans[0]!)); }, problem: /plan developer is listed twice/ },
  { rule: 'video tiers are ordered by resolution', mutate: (l) => { l.usage_kinds[2]!['max_pixels'] = 100; },
    problem: /video tiers must be ordered by max_pixels: video_hd follows video_sd/ },
  { rule: 'only video kinds have a resolution', mutate: (l) => { l.usage_kinds[0]!['max_pixels'] = 100; }, problem: /audio is not video/ },
  { rule: 'no unknown field', mutate: (l) => { l['discounts'] = []; }, problem: /Unrecognized key/ },
  { rule: 'money is integer minor units', mutate: (l) => { l.plans[1]!['monthly_fee_minor'] = 49.5; }, problem: /plans\.1\.monthly_fee_minor/ },
  { rule: 'unit_minutes is a power of ten', mutate: (l) => { l['unit_minutes'] = 60; }, problem: /unit_minutes must be a power of ten/ },
  { rule: 'the largest quote still fits a JSON number', mutate: (l) => { l.plans[0]!.unit_prices_minor['audio'] = 10 ** 9; },
    problem: /plan developer in .*: a quote of 10000000000 minutes per kind exceeds the safe integer range/ },
];

describe('price list: validated when the process starts', () => {
  it('accepts the shipped price list and freezes it', () => {
    assert.equal(PRICE_LIST.version, '2025-06-01');
    assert.ok(Object.isFrozen(PRICE_LIST) && Object.isFrozen(PRICE_LIST.plans[0]));
    assert.ok(PRICE_LIST.currencies.some((c) => c.minor_units === 0), 'a currency without minor units');
    assert.ok(PRICE_LIST.currencies.some((c) => c.minor_units === 2), 'a currency with two minor digits');
  });

  for (const row of RULES) {
    it(`refuses a price list that breaks the rule: ${row.rule}`, () => {
      const list = fresh();
      row.mutate(list);
      const problems = problemsOf(() => parsePriceList(list));
      assert.ok(problems.some((p) => row.problem.test(p)), problems.join('\n'));
    });
  }

  it('reports every problem at once', () => {
    const list = fresh();
    list.plans[1]!['currency'] = 'CHF';
    delete list.plans[2]!.unit_prices_minor['audio'];
    assert.equal(problemsOf(() => parsePriceList(list)).length, 2);
  });

  it('finds the one tier of any total of minutes', () => {
    assert.equal(discountTierFor(PRICE_LIST, 0).discount_bps, 0);
    assert.equal(discountTierFor(PRICE_LIST, 999_999).discount_bps, 0);
    assert.equal(discountTierFor(PRICE_LIST, 1_000_000).discount_bps, 500);
    assert.equal(discountTierFor(PRICE_LIST, 20_000_000).discount_bps, 1500);
    assert.equal(discountTierFor(PRICE_LIST, 60_000_000_000).discount_bps, 1500);
  });
});

describe('marketplace and platform data: validated when the process starts', () => {
  const market = (): { categories: Record<string, unknown>[]; extensions: (Record<string, unknown> & { pricing: Record<string, unknown>; tags: string[] })[] } =>
    structuredClone(rawMarketplace) as never;

  it('accepts the shipped marketplace, sorted by id', () => {
    const parsed = parseMarketplace(rawMarketplace, PRICE_LIST);
    const ids = parsed.extensions.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort());
  });

  const MARKET_RULES: readonly [string, (m: ReturnType<typeof market>) => void, RegExp][] = [
    ['an extension is in a listed category', (m) => { m.extensions[0]!['category'] = 'games'; }, /category games is not listed/],
    ['an extension is priced in a currency of the price list', (m) => {
      m.extensions[0]!.pricing = { model: 'per_1000_minutes', currency: 'CHF', unit_price_minor: 5 };
    }, /currency CHF is not a currency of the price list/],
    ['extension ids are unique', (m) => { m.extensions.push({ ...m.extensions[0]! }); }, /is listed twice/],
    ['no category is empty', (m) => { m.categories.push({ id: 'games', name: 'Games', description: 'Play' }); }, /category games has no extension/],
    ['tags are not repeated', (m) => { m.extensions[0]!.tags = ['a', 'a']; }, /tag a is listed twice/],
  ];
  for (const [rule, mutate, problem] of MARKET_RULES) {
    it(`refuses marketplace data that breaks the rule: ${rule}`, () => {
      const m = market();
      mutate(m);
      const problems = problemsOf(() => parseMarketplace(m, PRICE_LIST));
      assert.ok(problems.some((p) => problem.test(p)), problems.join('\n'));
    });
  }

  it('refuses platform data that lets the audience publish or misses a role', () => {
    const data = structuredClone(rawPlatform) as unknown as { roles: Record<string, unknown>[] };
    data.roles[4]!['may_publish'] = true;
    data.roles.splice(0, 1);
    const problems = problemsOf(() => parsePlatform(data));
    assert.ok(problems.includes('the audience role can never publish'), problems.join('\n'));
    assert.ok(problems.includes('role host is missing'), problems.join('\n'));
  });
});
