import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { basic } from '../helpers/http.ts';
import { startInProcess, testClock, type InProcessPlatform } from '../helpers/inproc.ts';
import type { ProjectUsage } from '@rtc/protocol';
import { decideSubscriptionRequest } from '../../server/src/billing/subscriptions.ts';

interface Usage { tokens_per_day: { day: string; tokens: number }[] }

describe('GET /v1/projects/{id}/usage', () => {
  // 2026-11-24T23:59:00Z: a minute before a UTC day ends
  const clock = testClock(Date.UTC(2026, 10, 24, 23, 59));
  let server: InProcessPlatform;
  let customer: Customer;
  let stranger: Customer;

  const usage = (projectId: string, token = customer.accessToken) =>
    server.request(`${server.api}/v1/projects/${projectId}/usage`, { method: 'GET', headers: bearer(token) });
  const issue = () => server.request(`${server.token}/v1/rtc/tokens`, {
    headers: { authorization: basic(customer.appId, customer.appSecret) }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
  });

  before(async () => {
    server = await startInProcess({ clock });
    customer = await createCustomer(server);
    stranger = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  it('counts the tokens issued per UTC day over the last 14 days, temporary tokens included', async () => {
    const empty = await usage(customer.projectId);
    assert.equal(empty.status, 200, empty.text);
    const days = empty.json<Usage>().tokens_per_day;
    assert.equal(days.length, 14);
    assert.equal(days.at(-1)!.day, '2026-11-24');
    assert.equal(days[0]!.day, '2026-11-11');
    assert.ok(days.every((d) => d.tokens === 0));

    for (let i = 0; i < 3; i++) assert.equal((await issue()).status, 200);
    const temporary = await server.request(`${server.api}/v1/projects/${customer.projectId}/temporary-token`, {
      headers: bearer(customer.accessToken), body: { room_id: 'r', user_id: 'console', role: 'host' },
    });
    assert.equal(temporary.status, 200);
    // refused requests are not tokens
    assert.equal((await server.request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: basic(customer.appId, 'wrong') }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
    })).status, 401);
    assert.deepEqual((await usage(customer.projectId)).json<Usage>().tokens_per_day.at(-1), { day: '2026-11-24', tokens: 4 });

    // past midnight UTC the count starts again; yesterday keeps its figure
    clock.advance(2 * 60_000);
    assert.equal((await issue()).status, 200);
    const next = (await usage(customer.projectId)).json<Usage>().tokens_per_day;
    assert.deepEqual(next.slice(-2), [{ day: '2026-11-24', tokens: 4 }, { day: '2026-11-25', tokens: 1 }]);
    // another project of another account counts nothing of these
    assert.ok((await usage(stranger.projectId, stranger.accessToken)).json<Usage>().tokens_per_day.every((d) => d.tokens === 0));
  });

  it('prices the period\'s minutes per usage kind exactly as the quote API does, on the project\'s plan', async () => {
    const projectId = customer.projectId;
    const now = Math.floor(clock.nowMs() / 1000);
    const store = server.deps.store;
    // sessions as media nodes record them: ended with their kind, one relayed, one still open (audio until it ends)
    const sessions = [
      { kind: 'video_full_hd', relayed: false, seconds: 3 * 86_400 },
      { kind: 'video_sd', relayed: true, seconds: 8 * 86_400 + 61 },
      { kind: 'audio', relayed: false, seconds: 9 * 86_400 },
    ];
    for (const [i, s] of sessions.entries()) {
      const participantId = `pa_usage${i}`;
      await store.openMediaSession({ participantId, projectId, roomId: 'priced', userId: `u${i}`, role: 'speaker', mediaNode: null, joinedAt: now - s.seconds - 10 });
      await store.closeMediaSession(participantId, now - 10, 'left', { usageKind: s.kind, relayed: s.relayed });
    }
    await store.openMediaSession({ participantId: 'pa_usage_open', projectId, roomId: 'priced', userId: 'open', role: 'speaker', mediaNode: null, joinedAt: now - 600 });

    const got = (await usage(projectId)).json<ProjectUsage>();
    const days = got.participant_minutes_per_day;
    const sum = (kind: string): number => days.reduce((n, d) => n + (d.minutes_by_kind[kind] ?? 0), 0);
    assert.deepEqual(got.cost.usage, {
      audio: sum('audio'), video_sd: sum('video_sd'), video_hd: 0, video_full_hd: sum('video_full_hd'), video_2k_plus: 0, turn_relay: sum('turn_relay'),
    });
    assert.ok(sum('video_full_hd') >= 3 * 1440 && sum('turn_relay') === sum('video_sd') && sum('audio') >= 9 * 1440 + 10);
    for (const d of days) assert.ok(d.minutes_by_kind['audio']! + d.minutes_by_kind['video_sd']! + d.minutes_by_kind['video_full_hd']! >= d.participant_minutes);
    assert.equal(got.cost.plan, 'developer');
    assert.equal(got.cost.plan_source, 'default');
    assert.equal(got.cost.from_day, days[0]!.day);
    assert.equal(got.cost.to_day, days.at(-1)!.day);

    const agreesWithQuote = async (cost: ProjectUsage['cost']): Promise<void> => {
      const quote = await server.request(`${server.api}/v1/billing/quotes`, { headers: bearer(customer.accessToken), body: { plan: cost.plan, usage: cost.usage } });
      assert.equal(quote.status, 201, quote.text);
      const q = quote.json<{ currency: string; minor_units: number; price_list_version: string; total_minor: number; usage_subtotal_minor: number;
        plan_fee: { amount_minor: number }; discount: { amount_minor: number }; usage: Record<string, number> }>();
      assert.deepEqual({
        currency: cost.currency, minor_units: cost.minor_units, price_list_version: cost.price_list_version, total_minor: cost.total_minor,
        usage_subtotal_minor: cost.usage_subtotal_minor, plan_fee_minor: cost.plan_fee_minor, discount_minor: cost.discount_minor, usage: cost.usage,
      }, {
        currency: q.currency, minor_units: q.minor_units, price_list_version: q.price_list_version, total_minor: q.total_minor,
        usage_subtotal_minor: q.usage_subtotal_minor, plan_fee_minor: q.plan_fee.amount_minor, discount_minor: q.discount.amount_minor, usage: q.usage,
      });
    };
    // developer includes no Full HD minutes: the period costs something
    assert.ok(got.cost.usage_subtotal_minor > 0);
    await agreesWithQuote(got.cost);

    // once a subscription request is approved, the project's plan prices the minutes
    const request = await server.request(`${server.api}/v1/billing/subscription-requests`, {
      headers: bearer(customer.accessToken), body: { project_id: projectId, plan: 'business' },
    });
    assert.equal(request.status, 201, request.text);
    await decideSubscriptionRequest(server.deps, request.json<{ id: string }>().id, 'approved');
    const onPlan = (await usage(projectId)).json<ProjectUsage>().cost;
    assert.equal(onPlan.plan, 'business');
    assert.equal(onPlan.plan_source, 'subscription');
    assert.deepEqual(onPlan.usage, got.cost.usage);
    await agreesWithQuote(onPlan);
    // the history says what each session was priced as
    const history = (await server.request(`${server.api}/v1/projects/${projectId}/sessions?room_id=priced`, { method: 'GET', headers: bearer(customer.accessToken) }))
      .json<{ sessions: { user_id: string; usage_kind: string | null; turn_relay: boolean }[] }>().sessions;
    assert.deepEqual(history.map((h) => [h.user_id, h.usage_kind, h.turn_relay]),
      [['open', null, false], ['u2', 'audio', false], ['u1', 'video_sd', true], ['u0', 'video_full_hd', false]]);
  });

  it('shows a project only to its account, and only with a console session', async () => {
    assert.equal((await usage(customer.projectId, stranger.accessToken)).status, 404);
    const credential = await server.request(`${server.api}/v1/projects/${customer.projectId}/usage`, {
      method: 'GET', headers: { authorization: basic(customer.appId, customer.appSecret) },
    });
    assert.equal(credential.status, 401);
  });
});
