import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOSS_PAUSE, PAUSE_AFTER_MS, PauseHold } from './pause-hold.ts';

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
});
