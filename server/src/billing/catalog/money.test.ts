import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { convertMinor, formatScaled, fraction, isDecimal, parseDecimal, roundHalfEven, toSafeNumber } from './money.ts';

describe('money: exact fractions and one rounding rule', () => {
  it('parses plain non-negative decimals exactly and refuses anything else', () => {
    assert.deepEqual(parseDecimal('156.5'), { num: 1565n, den: 10n });
    assert.deepEqual(parseDecimal('0.3075'), { num: 3075n, den: 10000n });
    assert.deepEqual(parseDecimal('1'), { num: 1n, den: 1n });
    for (const bad of ['', '-1', '1.', '.5', '01', '1e3', ' 1', '1,5', 'NaN']) {
      assert.equal(isDecimal(bad), false, bad);
      assert.throws(() => parseDecimal(bad), TypeError, bad);
    }
  });

  const HALF_EVEN: readonly [rule: string, num: bigint, den: bigint, expected: bigint][] = [
    ['0 stays 0', 0n, 10n, 0n], ['0.4 rounds down', 4n, 10n, 0n], ['0.5 goes to even 0', 5n, 10n, 0n],
    ['0.6 rounds up', 6n, 10n, 1n], ['1.5 goes to even 2', 15n, 10n, 2n], ['2.5 goes to even 2', 25n, 10n, 2n],
    ['3.5 goes to even 4', 35n, 10n, 4n], ['7668.5 goes to even 7668', 76685n, 10n, 7668n],
    ['78093.5 goes to even 78094', 780935n, 10n, 78094n], ['2.49 rounds down', 249n, 100n, 2n],
    ['2.51 rounds up', 251n, 100n, 3n], ['1/3 rounds down', 1n, 3n, 0n], ['2/3 rounds up', 2n, 3n, 1n],
  ];
  for (const [rule, num, den, expected] of HALF_EVEN) {
    it(`rounds half to even: ${rule}`, () => assert.equal(roundHalfEven({ num, den }), expected));
  }

  it('rounds every fraction to a nearest integer, ties to the even one', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.bigInt({ min: 1n, max: 10n ** 6n }), (num, den) => {
      const r = roundHalfEven({ num, den });
      const distance = num - r * den; // exact: r - num/den scaled by den
      const twice = 2n * (distance < 0n ? -distance : distance);
      assert.ok(twice <= den, 'at most half a unit away');
      if (twice === den) assert.equal(r % 2n, 0n, 'a tie goes to the even integer');
    }), { numRuns: 500 });
  });

  it('formats scaled integers as exact decimals without trailing zeros', () => {
    assert.equal(formatScaled(99n, 5), '0.00099');
    assert.equal(formatScaled(100n, 5), '0.001');
    assert.equal(formatScaled(4900n, 2), '49');
    assert.equal(formatScaled(1565n, 1), '156.5');
    assert.equal(formatScaled(7n, 0), '7');
  });

  it('converts through the base currency without rounding', () => {
    const usd = { minor_units: 2, per_base: '1' };
    const eur = { minor_units: 2, per_base: '0.92' };
    const jpy = { minor_units: 0, per_base: '156.5' };
    const kwd = { minor_units: 3, per_base: '0.3075' };
    // $49.00 = 4900 cents: 45.08 EUR, 7668.5 JPY, 15.0675 KWD
    assert.equal(roundHalfEven(convertMinor(fraction(4900), usd, eur)), 4508n);
    const yen = convertMinor(fraction(4900), usd, jpy);
    assert.equal(yen.num * 2n, 15337n * yen.den, 'exactly 7668.5 yen');
    const fils = convertMinor(fraction(4900), usd, kwd);
    assert.equal(fils.num * 10n, 150675n * fils.den, 'exactly 15067.5 fils');
    // EUR to JPY crosses the base: 45.08 EUR / 0.92 * 156.5 = 7668.5 JPY
    const cross = convertMinor(fraction(4508), eur, jpy);
    assert.equal(cross.num * 2n, 15337n * cross.den);
  });

  it('refuses amounts beyond the safe integer range', () => {
    assert.equal(toSafeNumber(BigInt(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
    assert.throws(() => toSafeNumber(BigInt(Number.MAX_SAFE_INTEGER) + 1n), RangeError);
    assert.throws(() => fraction(1, 0), RangeError);
  });
});
