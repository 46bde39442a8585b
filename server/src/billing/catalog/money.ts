/**
 * Exact money arithmetic for the price list and quotes: amounts are integers in a currency's minor
 * unit, intermediate values are exact fractions of BigInts, and a fraction becomes an amount in one
 * place only, `roundHalfEven` (docs/billing.md, "Rounding").
 */

/** A non-negative exact fraction `num / den` (den > 0). */
export interface Fraction {
  readonly num: bigint;
  readonly den: bigint;
}

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/** True for a plain non-negative decimal string such as `"0"`, `"156.5"` or `"0.3075"`. */
export function isDecimal(text: string): boolean {
  return DECIMAL.test(text);
}

/** `"156.5"` → 1565/10; throws TypeError for anything but a plain non-negative decimal. */
export function parseDecimal(text: string): Fraction {
  const match = DECIMAL.exec(text);
  if (!match) throw new TypeError(`not a non-negative decimal: ${JSON.stringify(text)}`);
  const fraction = match[2] ?? '';
  return { num: BigInt(`${match[1]}${fraction}`), den: 10n ** BigInt(fraction.length) };
}

export function fraction(num: bigint | number, den: bigint | number = 1n): Fraction {
  const n = BigInt(num);
  const d = BigInt(den);
  if (d <= 0n || n < 0n) throw new RangeError('a fraction needs a non-negative numerator and a positive denominator');
  return { num: n, den: d };
}

export function multiply(a: Fraction, b: Fraction): Fraction {
  return { num: a.num * b.num, den: a.den * b.den };
}

export function divide(a: Fraction, b: Fraction): Fraction {
  if (b.num === 0n) throw new RangeError('division by zero');
  return { num: a.num * b.den, den: a.den * b.num };
}

/** The nearest integer; an exact half goes to the even neighbour (banker's rounding). */
export function roundHalfEven(value: Fraction): bigint {
  const quotient = value.num / value.den;
  const twiceRemainder = (value.num % value.den) * 2n;
  if (twiceRemainder < value.den) return quotient;
  if (twiceRemainder > value.den) return quotient + 1n;
  return quotient % 2n === 0n ? quotient : quotient + 1n;
}

/** A BigInt that must fit a JSON number exactly. */
export function toSafeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError('amount exceeds the safe integer range');
  }
  return Number(value);
}

/**
 * `amount / 10^scale` as an exact decimal string without trailing zeros: (99, 5) → `"0.00099"`.
 */
export function formatScaled(amount: bigint, scale: number): string {
  if (amount < 0n) throw new RangeError('formatScaled takes a non-negative amount');
  if (scale === 0) return amount.toString();
  const digits = amount.toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const part = digits.slice(digits.length - scale).replace(/0+$/, '');
  return part === '' ? whole : `${whole}.${part}`;
}

/** What converting between two currencies needs to know about each. */
export interface CurrencyUnit {
  readonly minor_units: number;
  /** Units of this currency worth one unit of the base currency, as a decimal string. */
  readonly per_base: string;
}

/**
 * Converts an exact amount in minor units of `from` into exact minor units of `to` through the base
 * currency: amount / 10^from.minor / from.per_base * to.per_base * 10^to.minor. Nothing is rounded.
 */
export function convertMinor(amount: Fraction, from: CurrencyUnit, to: CurrencyUnit): Fraction {
  const fromRate = parseDecimal(from.per_base);
  const toRate = parseDecimal(to.per_base);
  const scaled = multiply(amount, fraction(10n ** BigInt(to.minor_units), 10n ** BigInt(from.minor_units)));
  return multiply(divide(scaled, fromRate), toRate);
}
