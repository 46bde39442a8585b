import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { ManualClock } from '../../../../test/helpers/manual-clock.ts';
import { Connection } from '../connection.ts';
import { Emitter } from '../emitter.ts';
import { MediaError, errorForClose } from '../errors.ts';
import type { MediaSessionEvents, MediaToken } from '../types.ts';
import { MOVE, Reconnection } from './reconnection.ts';
import type { SessionState } from './types.ts';

/** What the node a token names does with a join: accept it, refuse the connection (nothing listens), or time out. */
type Outcome = 'joins' | 'refused' | 'timeout';

const tokenFor = (node: string): MediaToken => ({
  media: { grant: 'a.b.c', key: Buffer.alloc(32, 7).toString('base64url'), sfu_host: node, sfu_port: 7880 },
  expires_at: 2_000_000_000,
});

const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Resolves once `check` holds, turning the event loop (real I/O and promises; the clock stays put). */
async function settled(check: () => boolean, what: string): Promise<void> {
  for (let round = 0; round < 10_000; round++) {
    if (check()) return;
    await turn();
  }
  assert.fail(`never: ${what}`);
}

describe('moving to another media node (the reconnection decision)', () => {
  // a port nothing listens on: a real refused connection, as from a killed media node
  let refusedUrl = '';
  before(async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    refusedUrl = `ws://127.0.0.1:${port}/v1/media`;
  });
  const ends: (() => void)[] = [];
  after(() => ends.forEach((end) => end()));

  /**
   * A reconnection with a manual clock whose `getToken` names the nodes of `placements` in turn
   * (the last one from then on); `outcomes` says what each node does with a join.
   */
  function harness(options: { maxAttempts?: number; placements: string[]; outcomes: Record<string, Outcome> }) {
    const clock = new ManualClock();
    const events = new Emitter<MediaSessionEvents>((err) => {
      throw err;
    });
    let state: SessionState = 'reconnecting';
    const tokens: { at: number; node: string }[] = [];
    const opens: { at: number; node: string; outcome: Outcome }[] = [];
    let openSettled = 0;
    let resumed = 0;
    let ended: MediaError | undefined;
    const reconnecting: MediaSessionEvents['reconnecting'][] = [];
    events.on('reconnecting', (e) => reconnecting.push(e));
    const reconnection = new Reconnection({
      getToken: async () => {
        const node = options.placements[Math.min(tokens.length, options.placements.length - 1)]!;
        tokens.push({ at: clock.now(), node });
        return tokenFor(node);
      },
      reconnect: { maxAttempts: options.maxAttempts ?? 10, initialDelayMs: 250, maxDelayMs: 5000 },
      keepaliveIntervalMs: 15_000,
      keepaliveTimeoutMs: 30_000,
    }, {
      state: () => state,
      connection: () => undefined,
      open: async (token) => {
        const node = token.media.sfu_host;
        const outcome = options.outcomes[node] ?? 'refused';
        opens.push({ at: clock.now(), node, outcome });
        try {
          if (outcome === 'joins') {
            state = 'connected';
            return;
          }
          if (outcome === 'timeout') throw new MediaError('timeout', 'the media server did not complete the join in time');
          await Connection.open({ url: refusedUrl, token, WebSocket, timeoutMs: 5000 }, {
            onJoined: () => undefined, onControl: () => undefined, onFrame: () => undefined, onClose: () => undefined,
          });
          assert.fail('nothing listens there');
        } finally {
          openSettled += 1;
        }
      },
      resume: async () => {
        resumed += 1;
      },
      end: (error) => {
        state = 'closed';
        ended = error;
      },
    }, events, clock, () => 0.5);
    ends.push(() => {
      state = 'closed';
    });
    return {
      clock, tokens, opens, reconnecting, reconnection,
      get resumed() { return resumed; },
      get ended() { return ended; },
      /** Moves the clock on, then lets the attempts due run to their end. */
      async advance(ms: number): Promise<void> {
        clock.advance(ms);
        await turn();
        await settled(() => openSettled === opens.length, 'the attempt settled');
        await turn();
      },
    };
  }

  it('moves at once after going_away: the first fresh token within 100 ms, then every half second, joining the node the token names', async () => {
    const h = harness({ maxAttempts: 2, placements: ['drained', 'drained', 'drained', 'other'], outcomes: { drained: 'refused', other: 'joins' } });
    const run = h.reconnection.run(errorForClose(1001, 'going_away'));
    // the random spread is half of goingAwaySpreadMs here (random() is 0.5)
    await h.advance(MOVE.goingAwaySpreadMs / 2 - 1);
    assert.equal(h.tokens.length, 0);
    await h.advance(1);
    assert.deepEqual(h.tokens.map((t) => t.node), ['drained'], 'the first attempt');
    await h.advance(MOVE.intervalMs - 1);
    assert.equal(h.tokens.length, 1);
    await h.advance(1);
    for (let i = 0; i < 2; i++) await h.advance(MOVE.intervalMs);
    await run;
    assert.deepEqual(h.opens.map((o) => o.node), ['drained', 'drained', 'drained', 'other']);
    assert.deepEqual(h.opens.map((o) => o.at), [50, 550, 1050, 1550], 'steady half-second pace, not a doubling backoff');
    assert.equal(h.resumed, 1);
    assert.equal(h.ended, undefined, 'more attempts than maxAttempts (2): moving does not count');
    assert.ok(h.reconnecting.every((e) => e.moving));
    assert.deepEqual(h.reconnecting.map((e) => e.attempt), [1, 2, 3, 4]);
  });

  it('treats a loss whose node answers again as transient: the doubling backoff, the same node, never moving', async () => {
    const h = harness({ placements: ['same'], outcomes: { same: 'joins' } });
    const run = h.reconnection.run(errorForClose(1006, ''));
    await h.advance(249);
    assert.equal(h.tokens.length, 0, 'the first attempt waits the initial delay');
    await h.advance(1);
    await run;
    assert.deepEqual(h.opens.map((o) => [o.node, o.at]), [['same', 250]]);
    assert.equal(h.resumed, 1);
    assert.deepEqual(h.reconnecting.map((e) => e.moving), [false]);
  });

  it('moves after one refused connection: the node is not coming back', async () => {
    const h = harness({ placements: ['killed', 'killed', 'killed', 'other'], outcomes: { killed: 'refused', other: 'joins' } });
    const run = h.reconnection.run(errorForClose(1006, ''));
    await h.advance(250);
    assert.deepEqual(h.opens.map((o) => o.node), ['killed']);
    for (let i = 0; i < 3; i++) await h.advance(MOVE.intervalMs);
    await run;
    assert.deepEqual(h.opens.map((o) => o.at), [250, 750, 1250, 1750]);
    assert.deepEqual(h.reconnecting.map((e) => e.moving), [false, true, true, true]);
    assert.equal(h.resumed, 1);
  });

  it('moves after two failed attempts of another kind (timeouts): within about 2 s of the loss', async () => {
    const h = harness({ placements: ['stuck', 'stuck', 'stuck', 'other'], outcomes: { stuck: 'timeout', other: 'joins' } });
    const run = h.reconnection.run(errorForClose(1006, ''));
    await h.advance(250);
    await h.advance(500);
    assert.deepEqual(h.opens.map((o) => o.at), [250, 750], 'the first two attempts follow the backoff');
    await h.advance(MOVE.intervalMs);
    await h.advance(MOVE.intervalMs);
    await run;
    assert.deepEqual(h.opens.map((o) => [o.node, o.at]), [['stuck', 250], ['stuck', 750], ['stuck', 1250], ['other', 1750]]);
    assert.deepEqual(h.reconnecting.map((e) => e.moving), [false, false, true, true]);
  });

  it('stops moving after the move window, then spends the attempts the policy has left and ends', async () => {
    const h = harness({ maxAttempts: 2, placements: ['gone'], outcomes: { gone: 'timeout' } });
    const run = h.reconnection.run(errorForClose(1001, 'going_away'));
    for (let t = 0; t < MOVE.windowMs + 10_000 && h.ended === undefined; t += 250) await h.advance(250);
    await run;
    assert.equal(h.ended?.code, 'timeout');
    const moving = h.reconnecting.filter((e) => e.moving).length;
    assert.ok(moving >= MOVE.windowMs / MOVE.intervalMs && moving <= MOVE.windowMs / MOVE.intervalMs + 2, `every half second through the window (${moving})`);
    assert.deepEqual(h.reconnecting.slice(moving).map((e) => e.moving), [false, false], 'then the two attempts of maxAttempts');
    assert.equal(h.resumed, 0);
  });

  it('never moves after a close that ends the session (revoked)', async () => {
    const h = harness({ placements: ['gone'], outcomes: {} });
    const error = errorForClose(4003, 'revoked');
    assert.equal(h.reconnection.follows(4003), false);
    assert.equal(h.reconnection.follows(1001), true);
    assert.equal(error.code, 'revoked');
  });
});
