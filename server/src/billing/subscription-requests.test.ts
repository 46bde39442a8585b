import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../config.ts';
import { runSubscriptionsCommand } from '../main/subscriptions-command.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { runRtcInProcess, type RtcResult } from '../../../test/helpers/rtc-inproc.ts';

interface SubscriptionRequest {
  id: string; project_id: string; plan: string; quote_id: string | null; note: string | null;
  status: 'pending' | 'approved' | 'rejected' | 'cancelled';
  created_at: number; updated_at: number; decided_at: number | null; reason: string | null;
}

const BASE = '/v1/billing/subscription-requests';

describe('billing subscription requests: states and transitions', () => {
  let server: InProcessPlatform;
  let alice: Customer;
  let bob: Customer;
  const auth = (c: Customer) => ({ authorization: `Bearer ${c.accessToken}` });
  const ask = (c: Customer, body: unknown) => server.request(`${server.api}${BASE}`, { headers: auth(c), body });
  const get = (c: Customer, id: string) => server.request(`${server.api}${BASE}/${id}`, { headers: auth(c) });
  const cancel = (c: Customer, id: string) => server.request(`${server.api}${BASE}/${id}/cancel`, { method: 'POST', headers: auth(c) });

  async function newProject(c: Customer, name = 'another project'): Promise<string> {
    const res = await server.request(`${server.api}/v1/projects`, { headers: auth(c), body: { name } });
    assert.equal(res.status, 201, res.text);
    return res.json<{ id: string }>().id;
  }

  async function pending(c: Customer, plan = 'business'): Promise<SubscriptionRequest> {
    const res = await ask(c, { project_id: await newProject(c), plan });
    assert.equal(res.status, 201, res.text);
    return res.json<SubscriptionRequest>();
  }

  /** `rtc subscriptions …` on the server's data directory, in this process (the command's own entry point). */
  async function operator(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runSubscriptionsCommand(args, loadConfig({ RTC_DATA_DIR: server.dataDir }), server.clock, {
      out: (line) => { stdout += `${line}\n`; },
      err: (line) => { stderr += `${line}\n`; },
    });
    return { code, stdout, stderr };
  }

  /** The `rtc` command line as an operator types it, run in this process with its output captured. */
  function rtc(...args: string[]): Promise<RtcResult> {
    return runRtcInProcess(args, { RTC_DATA_DIR: server.dataDir });
  }

  before(async () => {
    server = await startInProcess();
    [alice, bob] = await Promise.all([createCustomer(server), createCustomer(server)]);
  });
  after(async () => {
    await server.close();
  });

  it('starts a request as pending, with the plan, project, quote and note', async () => {
    const quote = await server.request(`${server.api}/v1/billing/quotes`, { headers: auth(alice), body: { plan: 'starter', usage: { audio: 90000 } } });
    const quoteId = quote.json<{ id: string }>().id;
    const res = await ask(alice, { project_id: alice.projectId, plan: 'starter', quote_id: quoteId, note: 'Launch in September\nthanks' });
    assert.equal(res.status, 201, res.text);
    const r = res.json<SubscriptionRequest>();
    assert.match(r.id, /^sreq_[A-Za-z0-9_-]{22}$/);
    assert.deepEqual({ ...r, id: '', created_at: 0, updated_at: 0 }, {
      id: '', project_id: alice.projectId, plan: 'starter', quote_id: quoteId, note: 'Launch in September\nthanks',
      status: 'pending', created_at: 0, updated_at: 0, decided_at: null, reason: null,
    });
    assert.equal(r.created_at, r.updated_at);
    assert.equal((await get(alice, r.id)).text, res.text);
  });

  it('refuses a second pending request for the same project, but not for another project', async () => {
    const project = await newProject(alice);
    assert.equal((await ask(alice, { project_id: project, plan: 'business' })).status, 201);
    const again = await ask(alice, { project_id: project, plan: 'scale' });
    assert.equal(again.status, 409);
    assert.deepEqual(again.json(), {
      error: 'conflict', message: 'the project already has a pending subscription request: cancel it or wait for the decision',
    });
    assert.equal((await ask(alice, { project_id: await newProject(alice), plan: 'scale' })).status, 201);
  });

  it('lets exactly one of many simultaneous requests for a project through', async () => {
    const project = await newProject(alice);
    const results = await Promise.all(Array.from({ length: 6 }, () => ask(alice, { project_id: project, plan: 'starter' })));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409]);
  });

  it('cancels a pending request; cancelling again changes nothing; the project may then ask again', async () => {
    const r = await pending(alice);
    const cancelled = await cancel(alice, r.id);
    assert.equal(cancelled.status, 200, cancelled.text);
    const c = cancelled.json<SubscriptionRequest>();
    assert.equal(c.status, 'cancelled');
    assert.equal(typeof c.decided_at, 'number');
    assert.equal(c.updated_at, c.decided_at);
    const again = await cancel(alice, r.id);
    assert.equal(again.status, 200);
    assert.equal(again.text, cancelled.text, 'unchanged');
    assert.equal((await ask(alice, { project_id: r.project_id, plan: 'scale' })).status, 201);
  });

  it('lets an operator approve a pending request with `rtc subscriptions approve` while the server runs', async () => {
    const r = await pending(bob, 'scale');
    const approved = await rtc('subscriptions', 'approve', r.id);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal((JSON.parse(approved.stdout) as SubscriptionRequest).status, 'approved');
    assert.equal((await get(bob, r.id)).json<SubscriptionRequest>().status, 'approved');
    const refused = await rtc('subscriptions', 'reject', r.id);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /only a pending request can become rejected/);
    const help = await rtc('help');
    assert.match(help.stdout, /subscriptions approve <id>/);
  });

  it('lets an operator approve a pending request, after which the customer cannot cancel it', async () => {
    const r = await pending(alice);
    const approved = await operator('approve', r.id);
    assert.equal(approved.code, 0, approved.stderr);
    const shown = JSON.parse(approved.stdout) as SubscriptionRequest;
    assert.equal(shown.status, 'approved');
    assert.equal(shown.id, r.id);
    assert.equal((await get(alice, r.id)).json<SubscriptionRequest>().status, 'approved');
    const refused = await cancel(alice, r.id);
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.json(), {
      error: 'conflict', message: 'the subscription request is approved: only a pending request can become cancelled',
    });
    const twice = await operator('approve', r.id);
    assert.equal(twice.code, 0, 'approving an approved request changes nothing');
    assert.equal(twice.stdout, approved.stdout);
    const reject = await operator('reject', r.id, '--reason', 'too late');
    assert.equal(reject.code, 1);
    assert.match(reject.stderr, /the subscription request is approved: only a pending request can become rejected/);
    // the project has no pending request left: it may ask for another plan
    assert.equal((await ask(alice, { project_id: r.project_id, plan: 'scale' })).status, 201);
  });

  it('never approves a cancelled request', async () => {
    const r = await pending(alice);
    assert.equal((await cancel(alice, r.id)).status, 200);
    const approve = await operator('approve', r.id);
    assert.equal(approve.code, 1);
    assert.match(approve.stderr, /the subscription request is cancelled: only a pending request can become approved/);
    assert.equal((await get(alice, r.id)).json<SubscriptionRequest>().status, 'cancelled');
  });

  it('lets an operator reject with a reason the customer sees, and list requests of every account', async () => {
    const mine = await pending(alice);
    const theirs = await pending(bob, 'starter');
    const rejected = await operator('reject', mine.id, '--reason', 'billing address missing');
    assert.equal(rejected.code, 0, rejected.stderr);
    const seen = (await get(alice, mine.id)).json<SubscriptionRequest>();
    assert.equal(seen.status, 'rejected');
    assert.equal(seen.reason, 'billing address missing');
    assert.equal((await cancel(alice, mine.id)).status, 409);

    const listed = await operator('list', '--status', 'pending');
    assert.equal(listed.code, 0, listed.stderr);
    const rows = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as SubscriptionRequest & { account_id: string });
    assert.ok(rows.every((row) => row.status === 'pending'));
    assert.ok(rows.some((row) => row.id === theirs.id && row.account_id.startsWith('acc_')));
    assert.ok(!rows.some((row) => row.id === mine.id));
  });

  it('refuses bad operator commands with exit code 2 and an unknown id with 1', async () => {
    for (const args of [[], ['approve'], ['approve', 'a', 'b'], ['promote', 'x'], ['list', '--status', 'done'], ['approve', 'x', '--reason', 'r'], ['list', '--limit', '0']]) {
      const res = await operator(...args);
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.stderr, /rtc subscriptions: /);
    }
    const unknown = await operator('approve', 'sreq_AAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /subscription request not found/);
    const elsewhere = await runSubscriptionsCommand(['list'], loadConfig({ RTC_DATA_DIR: join(server.dataDir, 'missing') }),
      server.clock, { out: () => assert.fail('no output'), err: (line) => assert.match(line, /no platform data at .*missing/) });
    assert.equal(elsewhere, 1);
    assert.equal(existsSync(join(server.dataDir, 'missing')), false, 'nothing was created');
  });

  it('checks the quote: the account\'s own, for the same plan', async () => {
    const quote = (plan: string, c: Customer) =>
      server.request(`${server.api}/v1/billing/quotes`, { headers: auth(c), body: { plan, usage: {} } }).then((r) => r.json<{ id: string }>().id);
    const project = await newProject(alice);
    const other = await ask(alice, { project_id: project, plan: 'business', quote_id: await quote('starter', alice) });
    assert.equal(other.status, 400);
    assert.deepEqual(other.json(), { error: 'invalid_request', message: 'quote_id names a quote for plan starter, not business' });
    const foreign = await ask(alice, { project_id: project, plan: 'business', quote_id: await quote('business', bob) });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.json(), { error: 'not_found', message: 'quote not found' });
    assert.equal((await ask(alice, { project_id: project, plan: 'business', quote_id: await quote('business', alice) })).status, 201);
  });

  it('refuses a request for an archived project', async () => {
    const project = await newProject(alice);
    assert.equal((await server.request(`${server.api}/v1/projects/${project}/archive`, { method: 'POST', headers: auth(alice) })).status, 200);
    const res = await ask(alice, { project_id: project, plan: 'starter' });
    assert.equal(res.status, 403);
    assert.deepEqual(res.json(), { error: 'project_archived', message: 'the project is archived' });
  });

  it("keeps another account's requests and projects invisible (404)", async () => {
    const r = await pending(alice);
    const unknownId = 'sreq_AAAAAAAAAAAAAAAAAAAAAA';
    const notFound = { error: 'not_found', message: 'subscription request not found' };
    assert.deepEqual((await get(bob, r.id)).json(), notFound);
    assert.equal((await get(bob, r.id)).text, (await get(bob, unknownId)).text);
    assert.equal((await cancel(bob, r.id)).status, 404);
    assert.equal((await get(alice, r.id)).json<SubscriptionRequest>().status, 'pending', 'untouched');
    const onTheirProject = await ask(bob, { project_id: r.project_id, plan: 'scale' });
    assert.equal(onTheirProject.status, 404);
    assert.deepEqual(onTheirProject.json(), { error: 'not_found', message: 'project not found' });
    const filtered = await server.request(`${server.api}${BASE}?project_id=${r.project_id}`, { headers: auth(bob) });
    assert.equal(filtered.status, 404);
    const all = (await server.request(`${server.api}${BASE}?limit=100`, { headers: auth(bob) })).json<{ subscription_requests: SubscriptionRequest[] }>();
    assert.ok(!all.subscription_requests.some((x) => x.id === r.id));
  });

  it('lists newest first, filtered by project and state, in pages that lose and repeat nothing', async () => {
    const carol = await createCustomer(server);
    const made: SubscriptionRequest[] = [];
    for (let i = 0; i < 5; i++) made.push(await pending(carol, i % 2 === 0 ? 'starter' : 'scale'));
    assert.equal((await cancel(carol, made[1]!.id)).status, 200);
    assert.equal((await cancel(carol, made[3]!.id)).status, 200);
    const walk = async (query: string): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const suffix: string = cursor === null ? '' : `&cursor=${cursor}`;
        const res = await server.request(`${server.api}${BASE}?limit=1${query}${suffix}`, { headers: auth(carol) });
        assert.equal(res.status, 200, res.text);
        const page = res.json<{ subscription_requests: SubscriptionRequest[]; next_cursor: string | null }>();
        ids.push(...page.subscription_requests.map((x) => x.id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      return ids;
    };
    const newest = [...made].reverse().map((x) => x.id);
    assert.deepEqual(await walk(''), newest);
    assert.deepEqual(await walk('&status=cancelled'), [made[3]!.id, made[1]!.id]);
    assert.deepEqual(await walk('&status=pending'), [made[4]!.id, made[2]!.id, made[0]!.id]);
    assert.deepEqual(await walk(`&project_id=${made[2]!.project_id}`), [made[2]!.id]);
    const page = (await server.request(`${server.api}${BASE}?limit=1&status=pending`, { headers: auth(carol) })).json<{ next_cursor: string }>();
    const mixed = await server.request(`${server.api}${BASE}?limit=1&status=cancelled&cursor=${page.next_cursor}`, { headers: auth(carol) });
    assert.equal(mixed.status, 400, 'a cursor holds its filters');
  });

  it('needs a console session', async () => {
    for (const [method, path] of [['POST', BASE], ['GET', BASE], ['GET', `${BASE}/x`], ['POST', `${BASE}/x/cancel`]] as const) {
      const res = await server.request(`${server.api}${path}`, { method, ...(method === 'POST' && path === BASE && { body: {} }) });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.json<{ error: string }>().error, 'unauthenticated');
    }
  });

  const BAD_BODIES: readonly [string, (project: string) => unknown, string][] = [
    ['a missing project_id', () => ({ plan: 'starter' }), 'project_id is required'],
    ['a project_id that is not a string', () => ({ project_id: 7, plan: 'starter' }), 'project_id must be a project id'],
    ['an empty project_id', () => ({ project_id: '', plan: 'starter' }), 'project_id must not be empty'],
    ['a project_id over 64 characters', () => ({ project_id: `prj_${'a'.repeat(61)}`, plan: 'starter' }), 'project_id must be at most 64 characters'],
    ['a missing plan', (p) => ({ project_id: p }), 'plan is required'],
    ['an unknown plan', (p) => ({ project_id: p, plan: 'enterprise' }), 'plan must be one of developer, starter, business, scale'],
    ['a quote_id that is not a string', (p) => ({ project_id: p, plan: 'starter', quote_id: 12 }), 'quote_id must be a quote id'],
    ['an empty quote_id', (p) => ({ project_id: p, plan: 'starter', quote_id: '' }), 'quote_id must not be empty'],
    ['a note that is not a string', (p) => ({ project_id: p, plan: 'starter', note: ['x'] }), 'note must be a string'],
    ['a blank note', (p) => ({ project_id: p, plan: 'starter', note: '   ' }), 'note must not be empty'],
    ['a note over 500 characters', (p) => ({ project_id: p, plan: 'starter', note: 'n'.repeat(501) }), 'note must be at most 500 characters'],
    ['a note with control characters', (p) => ({ project_id: p, plan: 'starter', note: 'a\u0007b' }),
      'note must not contain control characters other than line breaks'],
    ['a status in the request', (p) => ({ project_id: p, plan: 'starter', status: 'approved' }), 'unknown field "status" is not allowed'],
    ['an unknown field', (p) => ({ project_id: p, plan: 'starter', account_id: 'acc_x' }), 'unknown field "account_id" is not allowed'],
  ];
  for (const [rule, body, message] of BAD_BODIES) {
    it(`refuses ${rule} with 400 naming the rule`, async () => {
      const res = await ask(alice, body(alice.projectId));
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { error: 'invalid_request', message });
    });
  }

  const BAD_QUERIES: readonly [string, string][] = [
    ['status=done', 'status must be one of pending, approved, rejected, cancelled'],
    ['status=pending&status=approved', 'status must be given once'],
    ['project_id=', 'project_id must not be empty'],
    ['project_id=a&project_id=b', 'project_id must be given once'],
    ['limit=0', 'limit must be an integer from 1 to 100'],
    ['cursor=%3D%3D', 'cursor is not valid for this listing: pass next_cursor of the previous page with the same filters'],
    ['plan=starter', 'unknown query parameter "plan" is not allowed'],
  ];
  for (const [query, message] of BAD_QUERIES) {
    it(`refuses the list query ${query} with 400 naming the rule`, async () => {
      const res = await server.request(`${server.api}${BASE}?${query}`, { headers: auth(alice) });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { error: 'invalid_request', message });
    });
  }
});
