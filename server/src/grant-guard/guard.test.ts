import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventBus } from '../core/ports.ts';
import { GrantGuard, type GuardStore } from './guard.ts';

/** A bus whose test says when it was cut off and is back (`resync`), as the Redis bus does. */
function resyncingBus(): EventBus & { resync(): void } {
  const handlers = new Set<() => void>();
  return {
    reach: 'deployment',
    publish: async () => {},
    subscribe: () => () => {},
    onResync(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    resync: () => {
      for (const handler of handlers) handler();
    },
    close: async () => {},
  };
}

describe('grant guard: reading the store again when the bus may have missed events', () => {
  it('reads again after a failed read until one succeeds, so a revocation missed while the bus was away still arrives', { timeout: 20_000 }, async () => {
    let failures = 2;
    let reads = 0;
    const store: GuardStore = {
      isRevoked: async () => false,
      listRevocations: async () => {
        reads += 1;
        if (failures > 0) {
          failures -= 1;
          throw new Error('the store is away');
        }
        return [{ grantId: 'g1', projectId: 'p1', expiresAt: 2_000_000_000 }];
      },
      projectCutoff: async () => undefined,
      listProjectCutoffs: async () => [],
      roomCutoff: async () => undefined,
      listRoomCutoffs: async () => [],
    };
    const bus = resyncingBus();
    const errors: unknown[] = [];
    let onRevoked: (grantId: string) => void = () => {};
    const revoked = new Promise<string>((resolve) => { onRevoked = resolve; });
    const guard = GrantGuard.watch({
      store, bus, clock: { nowMs: () => 1_000_000_000_000 },
      onRevoked, onCutOff: () => {}, onRoomCutOff: () => {}, onReadError: (err) => errors.push(err),
    });
    // the guard's retry timer does not hold the process open; this test does, until it has its answer
    const alive = setInterval(() => {}, 1000);
    try {
      bus.resync();
      assert.equal(await revoked, 'g1');
      assert.equal(reads, 3);
      assert.equal(errors.length, 2);
    } finally {
      clearInterval(alive);
      guard.close();
    }
  });

  it('reads a removal\'s revocations before its cut-off and applies the cut-off first, so the session leaves as removed', async () => {
    const order: string[] = [];
    const removal = { projectId: 'p1', roomId: 'r1', userId: 'u1', cutAt: 1_000_000_000, expiresAt: 2_000_000_000 };
    const store: GuardStore = {
      isRevoked: async () => false,
      listRevocations: async () => {
        order.push('read revocations');
        return [{ grantId: 'g1', projectId: 'p1', expiresAt: 2_000_000_000 }];
      },
      projectCutoff: async () => undefined,
      listProjectCutoffs: async () => [],
      roomCutoff: async () => undefined,
      listRoomCutoffs: async () => {
        order.push('read cut-offs');
        return [removal];
      },
    };
    const guard = GrantGuard.watch({
      store, bus: resyncingBus(), clock: { nowMs: () => 1_000_000_000_000 },
      onRevoked: () => order.push('revoked'), onCutOff: () => {}, onRoomCutOff: () => order.push('cut off'),
    });
    try {
      await guard.load();
      // a store that took the cut-off first, then the revocations, shows both to this order of reads
      assert.deepEqual(order, ['read revocations', 'read cut-offs', 'cut off', 'revoked']);
      assert.deepEqual(guard.roomCutoffsOf('p1', 'r1', 'u1'), [removal]);
    } finally {
      guard.close();
    }
  });
});
