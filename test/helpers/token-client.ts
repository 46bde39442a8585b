import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { TokenClient, type TokenClientEvent, type TokenClientOptions } from '../../sdk/server/src/index.ts';
import type { Customer } from './customer.ts';

export /** A client whose waits are recorded instead of slept, on a clock that the waits advance. */
function recordingClient(base: TokenClientOptions): { client: TokenClient; sleeps: number[]; events: TokenClientEvent[] } {
  const sleeps: number[] = [];
  const events: TokenClientEvent[] = [];
  let now = 1_700_000_000_000;
  const client = new TokenClient({
    clock: { nowMs: () => now },
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    logger: (e) => events.push(e),
    ...base,
  });
  return { client, sleeps, events };
}

export function clientFor(c: Customer, baseUrl: string, extra: Partial<TokenClientOptions> = {}): TokenClient {
  return new TokenClient({ baseUrl, appId: c.appId, appSecret: c.appSecret, ...extra });
}

/** Awaits a promise that must reject with an error of `type`, and returns that error. */
export async function rejectsWith<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof type, `expected ${type.name}, got ${inspect(err)}`);
    return err;
  }
  assert.fail(`expected ${type.name}, but the call succeeded`);
}
