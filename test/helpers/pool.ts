/** Runs `count` calls of `fn` with at most `width` in flight; the results in call order. */
export async function pool<T>(count: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = await fn(i);
    }
  }));
  return results;
}
