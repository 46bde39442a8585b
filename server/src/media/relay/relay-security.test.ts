import assert from 'node:assert/strict';
import { createHash, createSecretKey, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { WebSocket } from 'ws';
import { createCustomer, type Customer } from '../../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../../test/helpers/inproc.ts';
import { inbox, noReconnect, openEndpoint, relayCleanup, startLink, startNode } from '../../../../test/helpers/relay-nodes.ts';
import type { MediaMasterKey } from '../../core/keyring.ts';
import { proofOfPossession } from '../session/grant-check.ts';
import { clientProof, keyRingRelayCredentials, type RelayKeySource } from './relay-credentials.ts';
import { DatagramSealer, DatagramType } from './relay-datagram.ts';
import { parseChallenge, RELAY_PATH, RelayClose } from './relay-messages.ts';

after(relayCleanup);

/** Opens the relay path as an app would, sends what `answer` makes of the challenge, and resolves with the close code. */
async function tryRelay(url: string, answer: (challenge: { node: string; nonce: Buffer }) => string): Promise<number> {
  const ws = new WebSocket(new URL(RELAY_PATH, url));
  return new Promise((resolve, reject) => {
    ws.once('message', (data) => {
      const challenge = parseChallenge(String(data));
      if (!challenge) return reject(new Error('no challenge'));
      ws.send(answer({ node: challenge.node, nonce: Buffer.from(challenge.nonce, 'base64url') }));
    });
    ws.once('close', (code) => resolve(code));
    ws.once('error', reject);
  });
}

describe('relay link: only media nodes open one (docs/protocol/relay.md, "Handshake")', { timeout: 30_000 }, () => {
  let platform: InProcessPlatform;
  let customer: Customer;
  before(async () => {
    platform = await startInProcess();
    customer = await createCustomer(platform);
  });
  after(() => platform.close());

  it("refuses an app's media grant and media key, on the node that shares the platform's key ring", async () => {
    const credentials = keyRingRelayCredentials(platform.deps.keys);
    const node = await startNode('127.0.0.1:7021', credentials);
    const res = await platform.request(`${platform.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: 'town-hall', user_id: 'u1', role: 'speaker', publish_streams: [1] },
    });
    assert.equal(res.status, 200, res.text);
    const { media } = res.json<TokenResponse>();
    const mediaKey = Buffer.from(media.key, 'base64url');
    const claims = JSON.parse(Buffer.from(media.grant.split('.')[1]!, 'base64url').toString()) as { cnf: { kid: string } };
    const clientNonce = randomBytes(32);

    // the media handshake's join, proof of possession included
    const join = await tryRelay(node.url, ({ nonce }) => JSON.stringify({
      type: 'join', grant: media.grant, nonce: clientNonce.toString('base64url'),
      proof: proofOfPossession(mediaKey, createHash('sha256').update(media.grant).digest(), nonce, clientNonce).toString('base64url'),
    }));
    assert.equal(join, RelayClose.protocol_error);
    assert.equal(await node.refused.next(), 'protocol_error');

    // a relay hello under the media key, naming the master key it was derived from
    for (const kid of [claims.cnf.kid, 'static']) {
      const hello = await tryRelay(node.url, ({ node: serverNode, nonce }) => {
        const transcript = { serverNode, clientNode: 'app', serverNonce: nonce, clientNonce, kid, clientLink: 1 };
        return JSON.stringify({
          type: 'relay_hello', version: 1, node: 'app', kid, nonce: clientNonce.toString('base64url'), link: 1,
          proof: clientProof(mediaKey, transcript).toString('base64url'),
        });
      });
      assert.equal(hello, RelayClose.unauthorized, `kid ${kid}`);
      assert.equal(await node.refused.next(), 'unauthorized');
    }
    assert.equal(node.relay.channels.size, 0);

    // a node of the platform, with the same ring, is let in
    const peer = await openEndpoint({ nodeId: '127.0.0.1:7022', credentials, host: '127.0.0.1', port: 0 });
    const { ups } = startLink({ endpoint: peer, url: node.url, setTimer: noReconnect });
    assert.equal((await ups.next()).peerNode, '127.0.0.1:7021');
  });

  it('takes a hello under a key this node has not loaded yet once its key ring reloads, and refuses a key no ring holds', async () => {
    const master = (kid: string): MediaMasterKey => ({ kid, secret: randomBytes(32), retireAt: undefined });
    const old = master('mk-1');
    const rotated = master('mk-2');
    let reloads = 0;
    const stale: RelayKeySource & { mediaMasters: Map<string, MediaMasterKey> } = {
      mediaMaster: old,
      mediaMasters: new Map([[old.kid, old]]),
      reloadForUnknownKey() {
        reloads++;
        const known = this.mediaMasters.has(rotated.kid);
        this.mediaMasters.set(rotated.kid, rotated);
        return Promise.resolve(!known);
      },
    };
    const node = await startNode('127.0.0.1:7031', keyRingRelayCredentials(stale));
    const fresh = await openEndpoint({
      nodeId: '127.0.0.1:7032', host: '127.0.0.1', port: 0,
      credentials: keyRingRelayCredentials({ mediaMaster: rotated, mediaMasters: new Map([[old.kid, old], [rotated.kid, rotated]]), reloadForUnknownKey: () => Promise.resolve(false) }),
    });
    const { ups } = startLink({ endpoint: fresh, url: node.url, setTimer: noReconnect });
    await ups.next();
    assert.equal(reloads, 1);

    const stranger = await openEndpoint({
      nodeId: '127.0.0.1:7033', host: '127.0.0.1', port: 0,
      credentials: keyRingRelayCredentials({ mediaMaster: master('mk-9'), mediaMasters: new Map(), reloadForUnknownKey: () => Promise.resolve(false) }),
    });
    const refused = startLink({ endpoint: stranger, url: node.url, setTimer: noReconnect });
    assert.equal((await refused.retries.next()).reason, 'unauthorized');
    assert.equal(reloads, 2);
  });
});

describe('relay link: datagrams that do not open are dropped and counted (docs/protocol/relay.md, "Datagrams")', { timeout: 30_000 }, () => {
  it('drops forged, foreign and malformed datagrams at the real socket, and delivers the genuine ones', async () => {
    const credentials = keyRingRelayCredentials({
      mediaMaster: { kid: 'mk-1', secret: randomBytes(32), retireAt: undefined },
      get mediaMasters() { return new Map([[this.mediaMaster.kid, this.mediaMaster]]); },
      reloadForUnknownKey: () => Promise.resolve(false),
    });
    const origin = await startNode('127.0.0.1:7041', credentials);
    const rtp = inbox<Buffer>();
    origin.handlers = { onRtp: (_t, _l, p) => rtp.push(p) };
    const relaying = await openEndpoint({ nodeId: '127.0.0.1:7042', credentials, host: '127.0.0.1', port: 0 });
    const { ups } = startLink({ endpoint: relaying, url: origin.url, setTimer: noReconnect });
    const up = await ups.next();
    const accepted = await origin.channels.next();

    const attacker = createSocket('udp4');
    after(() => attacker.close());
    const send = (datagram: Buffer): Promise<void> => new Promise((resolve, reject) => attacker.send(datagram, origin.endpoint.udpPort, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
    const forger = new DatagramSealer(createSecretKey(randomBytes(16)), accepted.link);
    // past the sequence numbers the link has used: a seen one is dropped as a replay before any cipher work
    for (let i = 0; i < 100; i++) forger.seal(DatagramType.rtp, 1, 0, Buffer.alloc(0));
    const forged = Buffer.concat(forger.seal(DatagramType.rtp, 1, 0, Buffer.from('forged')));
    await send(forged);
    assert.equal(await origin.drops.next(), 'auth');
    const foreign = Buffer.from(forged);
    foreign.writeUInt32BE((accepted.link + 1) >>> 0 || 1, 4);
    await send(foreign);
    assert.equal(await origin.drops.next(), 'unknown_link');
    await send(randomBytes(12));
    assert.equal(await origin.drops.next(), 'malformed');

    assert.ok(up.sendRtp(1, 0, Buffer.from('genuine')));
    assert.deepEqual(await rtp.next(), Buffer.from('genuine'));
    assert.deepEqual(origin.endpoint.stats.dropped, { malformed: 1, unknown_link: 1, auth: 1, replay: 0 });
    assert.equal(rtp.size, 0, 'no forged packet was delivered');
  });
});
