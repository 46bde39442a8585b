/**
 * Freezes `value` and everything it holds, in place, and returns it. Buffers are left as they are:
 * a view of bytes cannot be frozen.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Buffer.isBuffer(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
