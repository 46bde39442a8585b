import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_TTL_SECONDS } from '@rtc/protocol';
import { isCutOff, projectCutoffAt, ProjectCutoffs } from './project-cutoff.ts';

const NOW = 1_800_000_000;

describe('project cut-offs', () => {
  it('cuts off tokens issued at or before the archive second, and none after', () => {
    const rows: [number | undefined, number, boolean][] = [
      [NOW, NOW - 1, true],
      [NOW, NOW, true],
      [NOW, NOW + 1, false],
      [undefined, NOW, false],
    ];
    for (const [cutAt, issuedAt, cut] of rows) assert.equal(isCutOff(cutAt, issuedAt), cut, `cutAt ${cutAt}, iat ${issuedAt}`);
  });

  it('keeps a cut-off until the longest token issued before it has expired, plus the iat skew', () => {
    assert.deepEqual(projectCutoffAt('prj_a', NOW), { projectId: 'prj_a', cutAt: NOW, expiresAt: NOW + MAX_TTL_SECONDS + 60 });
  });

  it('remembers the latest cut-off per project and forgets the expired', () => {
    const cutoffs = new ProjectCutoffs();
    assert.equal(cutoffs.add(projectCutoffAt('prj_a', NOW)), true);
    assert.equal(cutoffs.add(projectCutoffAt('prj_a', NOW)), false, 'a cut-off heard twice ends nothing more');
    assert.equal(cutoffs.add(projectCutoffAt('prj_a', NOW - 5)), false, 'an older cut-off does not move it back');
    assert.equal(cutoffs.covers('prj_a', NOW), true);
    assert.equal(cutoffs.covers('prj_b', NOW), false);
    assert.equal(cutoffs.add(projectCutoffAt('prj_a', NOW + 10)), true);
    assert.equal(cutoffs.covers('prj_a', NOW + 10), true);
    const { expiresAt } = projectCutoffAt('prj_a', NOW + 10);
    cutoffs.purge(expiresAt);
    assert.equal(cutoffs.covers('prj_a', NOW), true, 'kept through its last second');
    cutoffs.purge(expiresAt + 1);
    assert.equal(cutoffs.covers('prj_a', NOW), false);
  });
});
