import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOSS_PAUSE, PAUSE_AFTER_MS, PauseHold, RETRY_AFTER_MS } from './pause-hold.ts';

const unfit = { target: -1, lowest: 0, hidden: false, paused: false, loss: 0 };

describe('pause hold', () => {
  it('keeps a forwarded video on its smallest layer for 2 s of an estimate too low, then lets it pause', () => {
    const hold = new PauseHold();
    assert.equal(hold.target(unfit, 1_000), 0);
    assert.equal(hold.target(unfit, 1_000 + PAUSE_AFTER_MS - 1), 0);
    assert.equal(hold.target(unfit, 1_000 + PAUSE_AFTER_MS), -1);
  });

  it('starts the 2 s again once the smallest layer fits', () => {
    const hold = new PauseHold();
    hold.target(unfit, 0);
    assert.equal(hold.target({ ...unfit, target: 0 }, 1_500), 0);
    assert.equal(hold.target(unfit, 1_600), 0);
    assert.equal(hold.target(unfit, 3_500), 0);
    assert.equal(hold.target(unfit, 3_600), -1);
  });

  it('holds nothing on a link that loses more than 10 %, for a hidden tile, a paused video or one without rates', () => {
    assert.equal(new PauseHold().target({ ...unfit, loss: LOSS_PAUSE + 0.01 }, 0), -1);
    assert.equal(new PauseHold().target({ ...unfit, hidden: true }, 0), -1);
    assert.equal(new PauseHold().target({ ...unfit, paused: true }, 0), -1);
    assert.equal(new PauseHold().target({ ...unfit, lowest: -1 }, 0), -1);
    assert.equal(new PauseHold().target({ ...unfit, target: 2 }, 0), 2);
  });

  it('tries a paused video again after 4 s when the estimate would keep its smallest layer, and waits twice as long after a try that failed', () => {
    // a 300 kbit/s link: probes show about 230 kbit/s, short of a resume's room, enough to keep the layer
    const paused = { target: -1, lowest: 0, hidden: false, paused: true, loss: 0, keepable: true };
    const hold = new PauseHold();
    assert.equal(hold.target(paused, 1_000), -1);
    assert.equal(hold.target(paused, 1_000 + RETRY_AFTER_MS - 1), -1);
    assert.equal(hold.target(paused, 1_000 + RETRY_AFTER_MS), 0);
    // the try did not hold: paused again 1 s later, the next try comes 8 s after that
    const again = 1_000 + RETRY_AFTER_MS + 1_000;
    assert.equal(hold.target({ ...unfit, loss: LOSS_PAUSE + 0.1 }, again - 500), -1);
    assert.equal(hold.target(paused, again), -1);
    assert.equal(hold.target(paused, again + 2 * RETRY_AFTER_MS - 1), -1);
    assert.equal(hold.target(paused, again + 2 * RETRY_AFTER_MS), 0);
    // not while the estimate would not even keep it
    assert.equal(new PauseHold().target({ ...paused, keepable: false }, 0), -1);
    const never = new PauseHold();
    never.target({ ...paused, keepable: false }, 0);
    assert.equal(never.target({ ...paused, keepable: false }, 60_000), -1);
  });
});

