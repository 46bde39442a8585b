/**
 * The impaired link over real UDP sockets on loopback. The machine is a loaded 2-core one:
 * every check waits for packets to arrive and asserts loosely, never a tight timing.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { IP_UDP_OVERHEAD_BYTES } from './direction.ts';
import { startImpairedLink, type ImpairedLink } from './impaired-link.ts';

const HOST = '127.0.0.1';

interface Target {
  readonly port: number;
  /** Arrival time (performance.now()) and size of each packet, and the sender's port. */
  readonly arrivals: { at: number; bytes: number; from: number }[];
  close(): Promise<void>;
}

/** A UDP server that records what arrives and, with `echo`, sends each packet back. */
async function startTarget(echo: boolean): Promise<Target> {
  const socket = createSocket('udp4');
  const arrivals: Target['arrivals'] = [];
  socket.on('message', (data, from) => {
    arrivals.push({ at: performance.now(), bytes: data.length, from: from.port });
    if (echo) socket.send(data, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  return { port: socket.address().port, arrivals, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

async function client(): Promise<Socket & { received: Buffer[] }> {
  const socket = Object.assign(createSocket('udp4'), { received: [] as Buffer[] });
  socket.on('message', (data) => socket.received.push(data));
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  return socket;
}

/** Polls until `check` holds; fails with `what` after a generous deadline. */
async function until(check: () => boolean | Promise<boolean>, what: string, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${limitMs} ms: ${what}`);
    await delay(20);
  }
}

/** Sends `count` packets of `bytes` through the link, `perTick` every 10 ms. */
async function pace(socket: Socket, link: ImpairedLink, count: number, bytes: number, perTick: number): Promise<void> {
  const payload = Buffer.alloc(bytes, 7);
  for (let sent = 0; sent < count; sent += perTick) {
    for (let i = 0; i < perTick && sent + i < count; i++) socket.send(payload, link.port, HOST);
    await delay(10);
  }
}

describe('startImpairedLink (a UDP proxy in a process of its own)', () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });
  const open = async (echo: boolean, settings?: Parameters<typeof startImpairedLink>[0]['settings']) => {
    const target = await startTarget(echo);
    closers.push(target.close);
    const link = await startImpairedLink({ target: { host: HOST, port: target.port }, ...(settings ? { settings } : {}), seed: 11 });
    closers.push(link.close);
    return { target, link };
  };

  it('forwards both ways, each client through an upstream socket of its own', async () => {
    const { target, link } = await open(true);
    assert.equal(link.turnUri, `turn:${HOST}:${link.port}?transport=udp`);
    const [a, b] = [await client(), await client()];
    closers.push(async () => {
      a.close();
      b.close();
    });
    a.send('from a', link.port, HOST);
    b.send('from b', link.port, HOST);
    await until(() => a.received.length > 0 && b.received.length > 0, 'both echoes');
    assert.equal(a.received[0]!.toString(), 'from a');
    assert.equal(b.received[0]!.toString(), 'from b');
    assert.equal(new Set(target.arrivals.map((x) => x.from)).size, 2);
    const stats = await link.stats();
    assert.equal(stats.clients, 2);
    assert.equal(stats.up.delivered, 2);
    assert.equal(stats.down.delivered, 2);
  });

  it('drops about the share of packets the loss rate says', async () => {
    const { target, link } = await open(false, { up: { lossRate: 0.2 } });
    const c = await client();
    closers.push(async () => void c.close());
    await pace(c, link, 1000, 200, 10);
    await until(async () => (await link.stats()).up.packets === 1000, 'the link counts every packet sent');
    const { up } = await link.stats();
    await until(() => target.arrivals.length === up.delivered, 'every packet forwarded arrives');
    assert.equal(up.lost + up.delivered, 1000);
    assert.ok(up.lost > 140 && up.lost < 260, `${up.lost} of 1000 lost`);
  });

  it('adds the delay to each packet', async () => {
    const { link } = await open(true, { down: { delayMs: 100 } });
    const c = await client();
    closers.push(async () => void c.close());
    const rtts: number[] = [];
    for (let i = 0; i < 10; i++) {
      const sentAt = performance.now();
      c.send(`ping ${i}`, link.port, HOST);
      await until(() => c.received.length > i, `echo ${i}`);
      rtts.push(performance.now() - sentAt);
    }
    rtts.sort((x, y) => x - y);
    // at least the delay; what comes on top is the loaded machine's, bounded generously
    assert.ok(rtts[0]! >= 99, `fastest echo ${rtts[0]} ms`);
    assert.ok(rtts[5]! < 600, `median echo ${rtts[5]} ms`);
  });

  it('delivers about the capped rate, drops at the tail of its queue, and runs free once the cap is lifted', async () => {
    const rateKbps = 400;
    const { target, link } = await open(false, { up: { rateKbps, queueMs: 150 } });
    const c = await client();
    closers.push(async () => void c.close());
    // 1000-byte packets, 100 a second: about 820 kbit/s on the wire, twice the cap
    await pace(c, link, 300, 1000, 1);
    await until(async () => {
      const { up } = await link.stats();
      return up.packets === 300 && up.inFlight === 0 && target.arrivals.length === up.delivered;
    }, 'the capped burst is through');
    const capped = [...target.arrivals];
    const { up } = await link.stats();
    assert.ok(up.queueDropped > 50, `${up.queueDropped} dropped at the queue's tail`);
    // from the 10th arrival to the last: the link's own pace, whatever the first packets found. On
    // average it never beats the cap; and it keeps up with it by the median gap between arrivals,
    // since a sender starved of CPU on a loaded machine leaves the queue empty now and then, and a
    // long gap with it (a receiver starved of CPU takes some together: shorter gaps, never longer)
    const steady = capped.slice(10);
    const bits = steady.slice(1).reduce((sum, x) => sum + (x.bytes + IP_UDP_OVERHEAD_BYTES) * 8, 0);
    const kbps = bits / (steady.at(-1)!.at - steady[0]!.at);
    assert.ok(kbps < rateKbps * 1.15, `${kbps.toFixed(0)} kbit/s through a ${rateKbps} kbit/s cap`);
    const gaps = steady.slice(1).map((x, i) => x.at - steady[i]!.at).sort((a, b) => a - b);
    const paced = ((1000 + IP_UDP_OVERHEAD_BYTES) * 8) / gaps[Math.floor(gaps.length / 2)]!;
    assert.ok(paced > rateKbps * 0.75, `packets ${paced.toFixed(0)} kbit/s apart through a ${rateKbps} kbit/s cap`);

    await link.set({ up: { rateKbps: null } });
    const before = await link.stats();
    await pace(c, link, 100, 1000, 1);
    await until(async () => (await link.stats()).up.packets === before.up.packets + 100, 'the free burst reaches the link');
    await until(async () => target.arrivals.length === capped.length + 100, 'all of it arrives once the cap is lifted');
    assert.equal((await link.stats()).up.queueDropped, before.up.queueDropped);
  });

  it('refuses invalid settings at the caller, and closes with packets still waiting', async () => {
    const { link } = await open(false, { up: { delayMs: 2000 } });
    await assert.rejects(link.set({ up: { lossRate: 2 } }), TypeError);
    const c = await client();
    closers.push(async () => void c.close());
    for (let i = 0; i < 20; i++) c.send(`late ${i}`, link.port, HOST);
    await until(async () => (await link.stats()).up.inFlight === 20, 'the packets wait in the link');
    // their timers are cleared: no send on a closed socket, the process exits cleanly
    await link.close();
    await assert.rejects(link.stats(), /closed/);
  });
});
