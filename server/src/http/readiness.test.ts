import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createReadiness } from './readiness.ts';

const keys = { verifying: [{}] } as unknown as { verifying: readonly never[] };
const answering = { ping: async (): Promise<void> => {} };

describe('readiness', () => {
  it('is not ready before start, ready once started, and never again from the start of a shutdown', async () => {
    const readiness = createReadiness({ store: answering, keys });
    assert.deepEqual(await readiness.check(), { status: 'unavailable', failing: ['starting'] });
    readiness.started();
    assert.deepEqual(await readiness.check(), { status: 'ready' });
    readiness.shuttingDown();
    readiness.started();
    assert.deepEqual(await readiness.check(), { status: 'unavailable', failing: ['shutting_down'] });
  });

  it('names every dependency that fails: the store, the keys and Redis', async () => {
    const store = { ping: async (): Promise<void> => { throw new Error('connection refused to 10.0.0.5'); } };
    const readiness = createReadiness({ store, keys: { verifying: [] } }, { redisLive: () => false, startedAlready: true });
    assert.deepEqual(await readiness.check(), { status: 'unavailable', failing: ['store', 'keys', 'redis'] });
  });

  it('counts a store that does not answer its ping within 2 s as failing', async () => {
    const readiness = createReadiness({ store: { ping: () => new Promise<void>(() => {}) }, keys }, { startedAlready: true });
    assert.deepEqual(await readiness.check(), { status: 'unavailable', failing: ['store'] });
  });

  it('follows Redis as it goes and comes back', async () => {
    let live = true;
    const readiness = createReadiness({ store: answering, keys }, { redisLive: () => live, startedAlready: true });
    assert.equal((await readiness.check()).status, 'ready');
    live = false;
    assert.deepEqual(await readiness.check(), { status: 'unavailable', failing: ['redis'] });
    live = true;
    assert.equal((await readiness.check()).status, 'ready');
  });
});
