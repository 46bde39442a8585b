import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaSessionList, ProjectUsage } from '@rtc/protocol';
import type { MediaSession } from '../../../sdk/app/src/index.ts';
import { bearer, createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, testClock, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../../../test/helpers/inproc-media.ts';
import { sleep } from '../../../test/e2e/media-helpers.ts';

// Calls of known length on the injected clock: the media role in this process records each session
// as it joins and leaves, and the session history and participant minutes (docs/console.md, "Usage",
// "Session history") say exactly how long they were.
describe('session history and participant minutes of calls of known length', () => {
  // 2026-11-25T10:00:00Z
  const clock = testClock(Date.UTC(2026, 10, 25, 10, 0));
  let server: InProcessPlatform;
  let media: InProcessMedia;
  let customer: Customer;

  before(async () => {
    server = await startInProcess({ clock });
    customer = await createCustomer(server);
    media = await startInProcessMedia(server, customer);
  });

  after(async () => {
    await media?.close();
    await server?.close();
  });

  const enter = (room: string, user: string): Promise<MediaSession> => media.enter(room, user);
  const history = async (room: string): Promise<MediaSessionList['sessions']> => {
    const res = await server.request(`${server.api}/v1/projects/${customer.projectId}/sessions?room_id=${room}`, {
      method: 'GET', headers: bearer(customer.accessToken),
    });
    assert.equal(res.status, 200, res.text);
    return res.json<MediaSessionList>().sessions;
  };
  /** Waits until the media role has recorded what `check` looks for (its writes follow the join or leave). */
  const recorded = async (room: string, check: (list: MediaSessionList['sessions']) => boolean): Promise<MediaSessionList['sessions']> => {
    for (let i = 0; ; i++) {
      const list = await history(room);
      if (check(list)) return list;
      assert.ok(i < 250, `the media role did not record it within 5 s: ${JSON.stringify(list)}`);
      await sleep(20);
    }
  };
  const today = async (): Promise<ProjectUsage['participant_minutes_per_day'][number]> => {
    const res = await server.request(`${server.api}/v1/projects/${customer.projectId}/usage`, { method: 'GET', headers: bearer(customer.accessToken) });
    assert.equal(res.status, 200, res.text);
    const day = res.json<ProjectUsage>().participant_minutes_per_day.find((d) => d.day === '2026-11-25');
    assert.ok(day, 'today is in the usage');
    return day;
  };

  it('lists each session with who, when, why and its exact duration, and counts its seconds and minutes in the day', async () => {
    const first = await enter('known-length', 'alice');
    clock.advance(30_000);
    const second = await enter('known-length', 'bob');
    await recorded('known-length', (list) => list.length === 2);
    // an open session counts up to now
    clock.advance(150_000);
    assert.equal((await today()).participant_seconds, 180 + 150);

    await second.close();
    const afterBob = await recorded('known-length', (list) => list.some((s) => s.user_id === 'bob' && s.left_at !== null));
    const bob = afterBob.find((s) => s.user_id === 'bob')!;
    assert.equal(bob.duration_seconds, 150);
    assert.equal(bob.reason, 'left');
    assert.equal(bob.left_at! - bob.joined_at, 150);

    clock.advance(270_000);
    await first.close();
    const done = await recorded('known-length', (list) => list.every((s) => s.left_at !== null));
    assert.deepEqual(done.map((s) => [s.user_id, s.duration_seconds, s.reason, s.usage_kind]),
      [['bob', 150, 'left', 'audio'], ['alice', 450, 'left', 'audio']]);

    // 450 + 150 seconds: ten participant minutes, priced as audio (nobody sent video)
    const day = await today();
    assert.equal(day.participant_seconds, 600);
    assert.equal(day.participant_minutes, 10);
    assert.equal(day.minutes_by_kind['audio'], 10);
    // time passing after the call adds nothing
    clock.advance(120_000);
    assert.equal((await today()).participant_seconds, 600);
  });
});
