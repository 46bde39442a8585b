/**
 * `rtc webhooks` run in this process (runRtc) against the platform served in the test process, delivering to a real HTTPS receiver
 * (self-signed, trusted through RTC_WEBHOOK_CA_FILE) that verifies every delivery with the server SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newLogin } from '../../../../test/helpers/customer.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { makeCertificate } from '../../../../test/helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../test/helpers/webhook-receiver.ts';
import { useTempDirs } from '../../../../test/helpers/grant-checks.ts';
import { runRtcInProcess, type RtcResult } from '../../../../test/helpers/rtc-inproc.ts';

interface WebhookJson { id: string; url: string; enabled: boolean; event_types: string[]; description: string; secret?: string }
interface DeliveryJson { id: string; event_id: string; event_type: string; status: string; attempts: number; last_status_code: number | null }

describe('rtc webhooks against a running platform and a real HTTPS receiver', () => {
  const tempDir = useTempDirs();
  let server: ServedPlatform;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  let project: string;
  /** Every CLI run but `webhooks create`'s: none may show a signing secret. */
  const otherOutputs: string[] = [];
  const secrets: string[] = [];

  const rtc = async (...args: string[]): Promise<RtcResult> => {
    const res = await runRtcInProcess(args, env);
    if (!(args[0] === 'webhooks' && args[1] === 'create')) otherOutputs.push(res.stdout, res.stderr);
    return res;
  };
  const ok = async (...args: string[]): Promise<string> => {
    const res = await rtc(...args);
    assert.equal(res.code, 0, `rtc ${args.join(' ')}:\n${res.stdout}${res.stderr}`);
    return res.stdout;
  };
  const deliveries = async (webhookId: string): Promise<DeliveryJson[]> =>
    (JSON.parse(await ok('webhooks', 'deliveries', webhookId, '--project', project, '--json')) as { deliveries: DeliveryJson[] }).deliveries;

  before(async () => {
    const tls = makeCertificate(tempDir());
    receiver = await startWebhookReceiver(tls);
    server = await serveInProcess({
      env: { RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile, RTC_LOG_LEVEL: 'trace' },
    });
    env = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
    const { email, password } = newLogin();
    const login = await runRtcInProcess(['login', '--url', server.api, '--email', email, '--register'], env, `${password}\n`);
    assert.equal(login.code, 0, login.stderr);
    project = (JSON.parse(await ok('projects', 'create', '--name', 'webhooks', '--json')) as { id: string }).id;
  });
  after(async () => {
    const logs = server?.output() ?? '';
    await server?.stop();
    await receiver?.stop();
    assert.ok(secrets.length > 0, 'an endpoint was created');
    for (const secret of secrets) {
      assert.ok(!logs.includes(secret), 'the signing secret is never logged');
      assert.ok(!otherOutputs.some((o) => o.includes(secret)), 'the signing secret is shown by create only');
    }
  });

  it('creates an endpoint (secret shown once), lists it, tests it, shows the delivery and deletes it', async () => {
    const created = await rtc('webhooks', 'create', '--project', project, '--url', receiver.url, '--description', 'cli receiver');
    assert.equal(created.code, 0, created.stderr);
    const secret = /^signing secret: (whsec_\S+)$/m.exec(created.stdout)?.[1];
    assert.ok(secret, created.stdout);
    secrets.push(secret);
    assert.match(created.stdout, /shown this once and will not be shown again/);
    const id = /^(wh_\S+) {2}enabled {2}all {2}/m.exec(created.stdout)?.[1];
    assert.ok(id, created.stdout);
    receiver.secrets = [secret];

    const listed = await ok('webhooks', 'list', '--project', project);
    assert.match(listed, /^ID +STATUS +EVENTS +URL +DESCRIPTION$/m);
    assert.match(listed, new RegExp(`^${id} +enabled +all +${receiver.url.replace(/[.]/g, '\\.')} +cli receiver$`, 'm'));
    const listedJson = JSON.parse(await ok('webhooks', 'list', '--project', project, '--json')) as { webhooks: WebhookJson[] };
    assert.deepEqual(listedJson.webhooks.map((w) => [w.id, w.url, w.enabled]), [[id, receiver.url, true]]);
    assert.equal(listedJson.webhooks[0]?.secret, undefined);

    const tested = await ok('webhooks', 'test', id, '--project', project);
    const eventId = /^sent webhook\.test event (evt_\S+)$/m.exec(tested)?.[1];
    assert.ok(eventId, tested);
    assert.match(tested, /^delivered: answered 204 after 1 attempt$/m);
    await receiver.waitFor((events) => events.some((e) => e.id === eventId && e.type === 'webhook.test' && e.data.webhook_id === id),
      'the webhook.test event');

    const log = await ok('webhooks', 'deliveries', id, '--project', project);
    assert.match(log, /^ID +EVENT +STATUS +ATTEMPTS +LAST CODE +CREATED +LAST ERROR$/m);
    assert.match(log, /^dlv_\S+ +webhook\.test +delivered +1 +204 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    const [entry] = (await deliveries(id)).filter((d) => d.event_id === eventId);
    assert.deepEqual(entry && [entry.event_type, entry.status, entry.attempts, entry.last_status_code], ['webhook.test', 'delivered', 1, 204]);

    const deleted = await ok('webhooks', 'delete', id, '--project', project);
    assert.equal(deleted, `deleted ${id}\n`);
    assert.equal(await ok('webhooks', 'list', '--project', project), 'no webhooks\n');
    const gone = await rtc('webhooks', 'deliveries', id, '--project', project);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^rtc: not_found: /);
  });

  it('updates the address, event types and state, and reports a test delivery that was refused', async () => {
    const created = await rtc('webhooks', 'create', '--project', project, '--url', receiver.url, '--events', 'room.started,room.finished', '--json');
    assert.equal(created.code, 0, created.stderr);
    const body = JSON.parse(created.stdout) as WebhookJson;
    const secret = body.secret ?? '';
    assert.match(secret, /^whsec_/);
    secrets.push(secret);
    receiver.secrets = [secret];
    assert.deepEqual(body.event_types, ['room.started', 'room.finished']);

    const disabled = await ok('webhooks', 'update', body.id, '--project', project, '--disable', '--events', 'all');
    assert.match(disabled, new RegExp(`^${body.id} +disabled +all +`, 'm'));
    const moved = JSON.parse(await ok('webhooks', 'update', body.id, '--project', project, '--enable', '--url', `${receiver.url}?v=2`,
      '--description', 'moved', '--json')) as WebhookJson;
    assert.deepEqual([moved.enabled, moved.url, moved.description, moved.secret], [true, `${receiver.url}?v=2`, 'moved', undefined]);

    const both = await rtc('webhooks', 'update', body.id, '--project', project, '--enable', '--disable');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--enable and --disable exclude each other/);
    const nothing = await rtc('webhooks', 'update', body.id, '--project', project);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /nothing to change/);
    const refused = await rtc('webhooks', 'update', body.id, '--project', project, '--url', 'http://example.com/hook');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^rtc: invalid_request: /);

    // the receiver refuses: the first attempt is reported with its status, exit code 1
    receiver.answer = 503;
    try {
      const failed = await rtc('webhooks', 'test', body.id, '--project', project, '--json');
      assert.equal(failed.code, 1, failed.stdout + failed.stderr);
      const report = JSON.parse(failed.stdout) as { event_id: string; delivery: DeliveryJson };
      assert.deepEqual([report.delivery.event_type, report.delivery.status, report.delivery.last_status_code], ['webhook.test', 'pending', 503]);
      assert.match(failed.stderr, new RegExp(`^rtc: webhooks test: ${report.event_id} was not delivered: not delivered yet \\(1 attempt\\)`));
    } finally {
      receiver.answer = 204;
    }
    await ok('webhooks', 'delete', body.id, '--project', project);
  });

  it('gives each subcommand its own --help, naming its flags', async () => {
    const create = await ok('webhooks', 'create', '--help');
    assert.match(create, /^usage: rtc webhooks create/);
    for (const flag of ['--project', '--url', '--events', '--description', '--json']) assert.match(create, new RegExp(`${flag}\\b`));
    assert.doesNotMatch(create, /--disable|webhooks deliveries/);
    const update = await ok('help', 'webhooks', 'update');
    for (const flag of ['--enable', '--disable', '--events']) assert.match(update, new RegExp(`${flag}\\b`));
    const all = await ok('webhooks', '--help');
    for (const sub of ['list', 'create', 'update', 'delete', 'test', 'deliveries']) assert.match(all, new RegExp(`^ {2}webhooks ${sub} `, 'm'));
    const unknown = await rtc('webhooks', 'list', '--project', project, '--bogus');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^rtc: webhooks list: .*--bogus/);
  });
});
