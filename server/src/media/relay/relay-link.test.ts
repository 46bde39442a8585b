import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificate } from '../../../../test/helpers/tls.ts';
import { after, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { MAX_CLIENT_MESSAGE_BYTES } from '@rtc/protocol';
import { inbox, noReconnect, onCleanup, openEndpoint, relayCleanup, ring, startLink, startNode, STREAM, type RelayNode } from '../../../../test/helpers/relay-nodes.ts';
import { realTimer, type SetTimer } from './relay-endpoint.ts';
import { reconnectDelay } from './relay-link.ts';
import { staticRelayCredentials } from './relay-credentials.ts';
import { parseHello } from './relay-messages.ts';

after(relayCleanup);
describe('relay link between two media nodes (docs/protocol/relay.md)', { timeout: 30_000 }, () => {
  it('links two nodes that share the key ring and exchanges RTP, RTCP and control both ways', async () => {
    const credentials = ring();
    const origin = await startNode('127.0.0.1:7001', credentials);
    const relaying = await openEndpoint({ nodeId: '127.0.0.1:7002', credentials, host: '127.0.0.1', port: 0 });

    const atOrigin = { subscribe: inbox<[number, unknown, readonly number[]]>(), keyFrame: inbox<[number, number]>(), nack: inbox<[number, number, readonly number[]]>(), rotate: inbox<number>(), rtp: inbox<[number, number, Buffer]>(), unsubscribe: inbox<number>() };
    origin.handlers = {
      onSubscribe: (t, s, l) => atOrigin.subscribe.push([t, s, l]),
      onKeyFrameRequest: (t, l) => atOrigin.keyFrame.push([t, l]),
      onNackMiss: (t, l, s) => atOrigin.nack.push([t, l, s]),
      onRotateKey: (t) => atOrigin.rotate.push(t),
      onRtp: (t, l, p) => atOrigin.rtp.push([t, l, p]),
      onUnsubscribe: (t) => atOrigin.unsubscribe.push(t),
    };
    const atRelaying = { frame: inbox<[number, Buffer]>(), rtp: inbox<[number, number, Buffer]>(), rtcp: inbox<[number, number, Buffer]>(), key: inbox<[number, number, Buffer]>(), end: inbox<number>(), subscribe: inbox<[number, unknown, readonly number[]]>() };
    const { link: l, ups } = startLink({
      endpoint: relaying, url: origin.url, peerNode: '127.0.0.1:7001',
      handlers: {
        onRtp: (t, la, p) => atRelaying.rtp.push([t, la, p]),
        onRtcp: (t, la, p) => atRelaying.rtcp.push([t, la, p]),
        onStreamKey: (t, e, k) => atRelaying.key.push([t, e, k]),
        onStreamEnd: (t) => atRelaying.end.push(t),
        onFrame: (t, f) => atRelaying.frame.push([t, f]),
        onSubscribe: (t, s, la) => atRelaying.subscribe.push([t, s, la]),
      },
    });
    // asked before the link is up: sent once it is
    assert.equal(l.subscribe(11, STREAM, [0, 2]), false);
    const up = await ups.next();
    assert.equal(up.peerNode, '127.0.0.1:7001');
    const accepted = await origin.channels.next();
    assert.equal(accepted.peerNode, '127.0.0.1:7002');
    assert.deepEqual(await atOrigin.subscribe.next(), [11, STREAM, [0, 2]]);

    // origin to relaying node: the stream's key, then its packets, each layer tagged
    const key = randomBytes(32);
    assert.ok(accepted.sendStreamKey(11, 3, key));
    assert.deepEqual(await atRelaying.key.next(), [11, 3, key]);
    const packets = Array.from({ length: 20 }, (_, i) => randomBytes(100 + i * 50));
    for (const [i, p] of packets.entries()) assert.ok(accepted.sendRtp(11, i % 2 === 0 ? 0 : 2, p));
    const received = await Promise.all(packets.map(() => atRelaying.rtp.next()));
    assert.deepEqual(received.map(([t]) => t), packets.map(() => 11));
    assert.deepEqual(new Set(received.map(([, , p]) => p.toString('hex'))), new Set(packets.map((p) => p.toString('hex'))));
    const sr = randomBytes(28);
    accepted.sendRtcp(11, 2, sr);
    assert.deepEqual(await atRelaying.rtcp.next(), [11, 2, sr]);

    // a sealed frame of a WebSocket stream, up to a client's largest message, in order on the control channel
    const frames = [randomBytes(10), randomBytes(MAX_CLIENT_MESSAGE_BYTES)];
    for (const f of frames) assert.ok(accepted.sendFrame(11, f));
    for (const f of frames) assert.deepEqual(await atRelaying.frame.next(), [11, f]);

    // relaying node to origin: feedback collapsed at the relaying node
    assert.ok(l.requestKeyFrame(11, 2));
    assert.deepEqual(await atOrigin.keyFrame.next(), [11, 2]);
    assert.ok(l.sendNackMiss(11, 0, [65535, 0, 1]));
    assert.deepEqual(await atOrigin.nack.next(), [11, 0, [65535, 0, 1]]);
    // a subscriber there lost access: the origin rotates the stream's key
    assert.ok(l.requestKeyRotation(11));
    assert.equal(await atOrigin.rotate.next(), 11);
    assert.ok(l.subscribe(11, STREAM, [0]));
    assert.deepEqual(await atOrigin.subscribe.next(), [11, STREAM, [0]]);

    // the other way on the same link: the origin subscribes to a stream of the relaying node
    const other = { ...STREAM, stream_id: 2 };
    accepted.subscribe(5, other, [0]);
    assert.deepEqual(await atRelaying.subscribe.next(), [5, other, [0]]);
    assert.ok(up.sendRtp(5, 0, Buffer.from('opus')));
    assert.deepEqual(await atOrigin.rtp.next(), [5, 0, Buffer.from('opus')]);

    // a message the peer would refuse is never sent: the link stays up
    assert.throws(() => l.requestKeyFrame(11, 8), TypeError);
    assert.throws(() => accepted.sendStreamKey(11, 0, key), TypeError);
    assert.throws(() => accepted.sendFrame(11, new Uint8Array(0)), TypeError);
    assert.throws(() => accepted.sendFrame(11, new Uint8Array(MAX_CLIENT_MESSAGE_BYTES + 3)), TypeError);
    assert.throws(() => l.subscribe(0, STREAM, [0]), TypeError);
    assert.throws(() => l.subscribe(12, { ...STREAM, room_id: '' }, [0]), TypeError);
    accepted.endStream(11);
    assert.equal(await atRelaying.end.next(), 11);
    l.unsubscribe(11);
    assert.equal(await atOrigin.unsubscribe.next(), 11);
    assert.deepEqual(origin.endpoint.stats.dropped, { malformed: 0, unknown_link: 0, auth: 0, replay: 0 });
  });

  it('refuses a node with another credential, and a node does not take a peer that cannot prove it', async () => {
    const origin = await startNode('127.0.0.1:7011', staticRelayCredentials(randomBytes(32)));
    const impostor = await openEndpoint({ nodeId: '127.0.0.1:7012', credentials: staticRelayCredentials(randomBytes(32)), host: '127.0.0.1', port: 0 });
    const { retries, ups } = startLink({ endpoint: impostor, url: origin.url, setTimer: noReconnect });
    assert.equal(await origin.refused.next(), 'unauthorized');
    assert.equal((await retries.next()).reason, 'unauthorized');
    assert.equal(ups.size, 0);
    assert.equal(origin.relay.channels.size, 0);

    // the other way: a server that answers every hello but cannot prove the credential is not a node
    const secret = randomBytes(32);
    const honest = await openEndpoint({ nodeId: '127.0.0.1:7013', credentials: staticRelayCredentials(secret), host: '127.0.0.1', port: 0 });
    const fake = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    onCleanup(() => new Promise<void>((resolve) => fake.close(() => resolve())));
    await new Promise((resolve) => fake.once('listening', resolve));
    const hellos = inbox<string>();
    fake.on('connection', (ws) => {
      ws.send(JSON.stringify({ type: 'relay_challenge', version: 1, node: '127.0.0.1:7014', nonce: randomBytes(32).toString('base64url') }));
      ws.on('message', (data) => {
        hellos.push(String(data));
        ws.send(JSON.stringify({ type: 'relay_welcome', link: 9, udp_port: impostor.udpPort, proof: randomBytes(32).toString('base64url') }));
      });
    });
    const fakeUrl = `ws://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const toFake = startLink({ endpoint: honest, url: fakeUrl, setTimer: noReconnect });
    const hello = parseHello(await hellos.next());
    assert.ok(hello, 'the hello is well formed');
    assert.ok(!JSON.stringify(hello).includes(secret.toString('base64url')), 'the secret never crosses the link');
    assert.equal((await toFake.retries.next()).reason, 'unauthorized');
    assert.equal(toFake.ups.size, 0);
    assert.equal(honest.stats.sent, 0, 'nothing is sent over UDP to a peer that did not prove the credential');

    // a node that announces another id than the one it is dialled as is refused too
    const shared = staticRelayCredentials(secret);
    const real = await startNode('127.0.0.1:7015', shared);
    const wrongId = startLink({ endpoint: honest, url: real.url, peerNode: '127.0.0.1:9999', setTimer: noReconnect });
    assert.equal((await wrongId.retries.next()).reason, 'unauthorized');
  });

  it('opens a broken link again with exponential backoff, reports down and up, and sends its subscriptions again', async () => {
    const credentials = ring();
    let origin = await startNode('127.0.0.1:7051', credentials);
    const relaying = await openEndpoint({ nodeId: '127.0.0.1:7052', credentials, host: '127.0.0.1', port: 0 });
    // reconnections wait for the test to fire them; every other timer is real
    const waits = inbox<{ ms: number; fire: () => void }>();
    const setTimer: SetTimer = (fn, ms, purpose) => {
      if (purpose !== 'reconnect') return realTimer(fn, ms, purpose);
      waits.push({ ms, fire: fn });
      return () => undefined;
    };
    const subscribed = (node: RelayNode): Promise<unknown> => new Promise((resolve) => {
      node.handlers = { onSubscribe: (...args) => resolve(args) };
    });
    let subscribedAtOrigin = subscribed(origin);
    const { link: l, ups, downs, retries } = startLink({ endpoint: relaying, url: origin.url, setTimer, random: () => 0, reconnectInitialMs: 200, reconnectMaxMs: 700 });
    l.subscribe(3, STREAM, [1]);
    await ups.next();
    assert.deepEqual(await subscribedAtOrigin, [3, STREAM, [1]]);

    const port = origin.port;
    await origin.close();
    assert.equal(await downs.next(), 'closed');
    assert.equal(l.isUp, false);
    assert.equal(l.sendRtp(3, 1, Buffer.from('lost')), false, 'a packet sent while down is dropped, as a paused stream\'s');
    // the upper half of each doubling wait; random() = 0 takes its lower end
    const expected = [100, 200, 350, 350];
    for (const [i, ms] of expected.entries()) {
      const retry = await retries.next();
      assert.deepEqual(retry, { attempt: i + 1, delayMs: ms, reason: i === 0 ? 'closed' : 'unreachable' });
      const wait = await waits.next();
      assert.equal(wait.ms, ms);
      if (i < expected.length - 1) wait.fire();
      else {
        origin = await startNode('127.0.0.1:7051', credentials, port);
        subscribedAtOrigin = subscribed(origin);
        wait.fire();
      }
    }
    const up = await ups.next();
    assert.equal(up.peerNode, '127.0.0.1:7051');
    assert.deepEqual(await subscribedAtOrigin, [3, STREAM, [1]], 'the subscription is sent again on the new link');
    assert.equal(downs.size, 0, 'down is reported once per break, not per failed attempt');

    // after an up the backoff starts over
    await origin.close();
    await downs.next();
    assert.deepEqual(await retries.next(), { attempt: 1, delayMs: 100, reason: 'closed' });
  });

  it('computes each wait as the upper half of a doubling, capped delay', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((a) => reconnectDelay(a, 250, 10_000, 0)), [125, 250, 500, 1000, 2000, 4000, 5000]);
    assert.deepEqual([1, 2, 7, 60].map((a) => reconnectDelay(a, 250, 10_000, 0.999_999)), [250, 500, 10_000, 10_000]);
  });

  it('runs over wss when the node has TLS, the client trusting its certificate, and dials a node by name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-tls-'));
    onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const { certFile, keyFile } = makeCertificate(dir);
    const tls = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
    const credentials = ring();
    const origin = await startNode('127.0.0.1:7061', credentials, 0, tls);
    assert.match(origin.url, /^wss:/);
    const relaying = await openEndpoint({ nodeId: '127.0.0.1:7062', credentials, host: '127.0.0.1', port: 0 });
    const untrusting = startLink({ endpoint: relaying, url: origin.url, setTimer: noReconnect });
    assert.equal((await untrusting.retries.next()).reason, 'unreachable', 'a certificate it does not trust is not dialled');
    // dialled by name: the certificate names localhost, and the datagrams go to the address it resolves to
    const byName = origin.url.replace('127.0.0.1', 'localhost');
    const rtp = inbox<Buffer>();
    const { ups } = startLink({ endpoint: relaying, url: byName, ca: tls.cert, setTimer: noReconnect, handlers: { onRtp: (_t, _l, p) => rtp.push(p) } });
    assert.equal((await ups.next()).peerNode, '127.0.0.1:7061');
    const accepted = await origin.channels.next();
    assert.ok(accepted.sendRtp(1, 0, Buffer.from('over tls')));
    assert.deepEqual(await rtp.next(), Buffer.from('over tls'));
  });

  it('reports a link down as timeout when the peer stops answering its keepalives', async () => {
    const credentials = ring();
    const origin = await startNode('127.0.0.1:7071', credentials);
    const relaying = await openEndpoint({ nodeId: '127.0.0.1:7072', credentials, host: '127.0.0.1', port: 0 });
    // a TCP path that can go silent without closing, as a dead host or a cut network does
    let silent = false;
    const proxy = createNetServer((client) => {
      const upstream = connect(origin.port, '127.0.0.1');
      client.on('data', (d) => { if (!silent) upstream.write(d); });
      upstream.on('data', (d) => { if (!silent) client.write(d); });
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      onCleanup(() => { client.destroy(); upstream.destroy(); });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    const url = `ws://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const { ups, downs } = startLink({ endpoint: relaying, url, keepaliveMs: 200, setTimer: noReconnect });
    await ups.next();
    silent = true;
    assert.equal(await downs.next(), 'timeout');
  });
});

