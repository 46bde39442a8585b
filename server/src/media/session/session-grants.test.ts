import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { GrantHolders } from '../../grant-guard/grant-holders.ts';
import type { MediaGrant } from './grant-check.ts';
import { SessionGrants, type Permissions } from './session-grants.ts';

const NOW_MS = Date.UTC(2026, 10, 28, 12, 0);

const grant = (grantId: string, pub: number[]): MediaGrant => ({
  token: grantId, digest: Buffer.alloc(32), grantId, projectId: 'prj', appId: 'app', roomId: 'room', userId: 'user',
  role: 'speaker', pub: new Set(pub), subs: new Set(), subRoom: true, issuedAt: NOW_MS / 1000 - 60, expiresAt: NOW_MS / 1000 + 600,
});
const permissions = (pub: number[], setAt: number): Permissions => ({ pub: new Set(pub), subs: new Set(), subRoom: true, setAt });

describe('the permissions of a session over renewals', () => {
  /** A session's grants, released at the end of test `t` (their expiry timer ends with them). */
  const open = (t: TestContext): SessionGrants<object> => {
    const grants = new SessionGrants({}, new GrantHolders(), () => NOW_MS, () => undefined);
    t.after(() => grants.release());
    return grants;
  };

  it('keeps the newest change: a renewal\'s grant holding an older one does not bring back what it took away', (t) => {
    const grants = open(t);
    grants.admit(grant('a', [1]), permissions([1], 1_000));
    grants.restrict(permissions([], 2_000));
    assert.deepEqual([...grants.renew(grant('b', [1]), permissions([1], 1_000)).pub], []);
    // a newer change stored on the renewal's grant holds
    assert.deepEqual([...grants.renew(grant('c', [1]), permissions([2], 3_000)).pub], [2]);
    assert.equal(grants.permissionsSet?.setAt, 3_000);
  });

  it('ignores a change older than the one the session holds, and applies one of the same time', (t) => {
    const grants = open(t);
    grants.admit(grant('a', [1]));
    assert.deepEqual([...grants.restrict(permissions([], 2_000))!.pub], []);
    assert.equal(grants.restrict(permissions([1], 1_000)), undefined);
    assert.deepEqual([...grants.current!.pub], []);
    assert.deepEqual([...grants.restrict(permissions([3], 2_000))!.pub], [3]);
  });
});
