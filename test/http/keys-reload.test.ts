/**
 * Two processes of one SQLite data directory, composed in this process: a rotation made with
 * `rtc keys rotate` reaches the one that runs the signaling service without a restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../server/src/config.ts';
import { jwsKeyId } from '../../server/src/core/grant.ts';
import { createPasswordHasher } from '../../server/src/core/password.ts';
import { composeServices, type Services } from '../../server/src/main/compose.ts';
import { runKeysRotate } from '../../server/src/main/keys-command.ts';
import { issueToken } from '../../server/src/tokens/issue.ts';
import type { ServiceDeps } from '../../server/src/core/deps.ts';
import { createSignalingService } from '../../server/src/signaling/service.ts';
import { defaultSignalingSettings } from '../../server/src/signaling/settings.ts';

const ISSUER = 'rtc-platform';
const dataDir = mkdtempSync(join(tmpdir(), 'rtc-keys-reload-'));
const config = loadConfig({ RTC_DATA_DIR: dataDir, RTC_ROLES: 'api,token' });
const opened: Services[] = [];
after(async () => {
  for (const deps of opened) {
    await deps.close();
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function compose(keyReloadIntervalMs?: number): Promise<Services> {
  const deps = await composeServices(config, {
    onBusError: (err) => { throw err; }, passwords: createPasswordHasher({ N: 1024, r: 8, p: 1 }), keyReloadIntervalMs,
  });
  opened.push(deps);
  return deps;
}

async function signalingToken(deps: ServiceDeps): Promise<string> {
  const issued = await issueToken(deps, { issuer: ISSUER, sfuHost: 'localhost', sfuPort: 7880, signalingUrl: 'http://localhost:8082' }, {
    projectId: `prj_${'A'.repeat(22)}`, appId: `app_${'B'.repeat(22)}`, publisher: true, subscriber: true, maxTtlSeconds: 3600,
  }, { room_id: 'room-1', user_id: 'user-1', role: 'speaker', signaling: true });
  return issued.signaling!.token;
}

async function rotate(): Promise<string> {
  const out: string[] = [];
  const code = await runKeysRotate(config, { nowMs: () => Date.now() }, { out: (line) => out.push(line), err: (line) => out.push(line) });
  assert.equal(code, 0, out.join('\n'));
  return (JSON.parse(out[0]!) as { signing_kid: string }).signing_kid;
}

describe('key rotation reaching running processes (one data directory)', () => {
  it('the signaling service accepts a token signed by a key rotated in after it started, and keeps accepting the old one', async () => {
    const signalingNode = await compose();
    const service = createSignalingService(signalingNode, defaultSignalingSettings(ISSUER));
    try {
      const before = await signalingToken(signalingNode);
      const newKid = await rotate();
      const issuingNode = await compose();
      const after = await signalingToken(issuingNode);
      assert.equal(jwsKeyId(after), newKid);
      assert.notEqual(signalingNode.keys.signing.kid, newKid, 'nothing reloaded yet');

      assert.equal((await service.authenticate(after)).userId, 'user-1');
      assert.equal(signalingNode.keys.signing.kid, newKid, 'the unknown kid made it reload');
      assert.equal((await service.authenticate(before)).userId, 'user-1');
    } finally {
      service.close();
    }
  });

  it('a running process signs with the new key after its periodic look at the ring', async () => {
    const node = await compose(20);
    const newKid = await rotate();
    const deadline = Date.now() + 10_000;
    while (jwsKeyId(await signalingToken(node)) !== newKid) {
      assert.ok(Date.now() < deadline, 'the rotation was not picked up');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(node.keys.verifying.length >= 2, 'the old key is still published');
  });
});
