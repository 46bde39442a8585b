/**
 * Drives the WebRTC test page (webrtc-page.ts) in Chromium from a test: opens it, joins, publishes,
 * reads what it decodes, and waits on it; and opens an encrypted encoded frame with a stream key
 * (docs/protocol/media.md, "Encrypted encoded frames") to show what the media nodes forward.
 */
import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { decodeTrailer, e2eeNonce, E2EE_TAG_BYTES, E2EE_TRAILER_BYTES, type TokenResponse } from '@rtc/protocol';
import type { PageEncoding, PageJoinOptions, PageMeasure, PagePublishOptions, PageRtc } from './webrtc-page.ts';

type PageGlobal = { rtc: PageRtc };

/** A page of its own browser context (its own session), once the page's `rtc` object is there. */
export async function openRtcPage(browser: Browser, url: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as unknown as { rtc?: unknown }).rtc !== undefined);
  return page;
}

export const closeRtcPage = (page: Page): Promise<void> => page.context().close();

export const measurePage = (page: Page): Promise<PageMeasure> => page.evaluate(() => (globalThis as unknown as PageGlobal).rtc.measure());

export const joinPage = (page: Page, token: TokenResponse, webrtc?: { iceTransportPolicy: 'relay' }, options?: PageJoinOptions) =>
  page.evaluate(([t, w, o]) => (globalThis as unknown as PageGlobal).rtc.join(t, w, o), [token, webrtc, options] as const);

export const publishFromPage = (page: Page, kinds: readonly ('audio' | 'video')[], streamIds?: readonly number[], options?: PagePublishOptions) =>
  page.evaluate(([k, s, o]) => (globalThis as unknown as PageGlobal).rtc.publish(k, s, o), [kinds, streamIds, options] as const);

export const sentFromPage = (page: Page): Promise<PageEncoding[]> => page.evaluate(() => (globalThis as unknown as PageGlobal).rtc.sent());

export const setPageVideoBounds = (page: Page, streamId: number, bounds: Parameters<PageRtc['setVideoBounds']>[1]): Promise<void> =>
  page.evaluate(([i, b]) => (globalThis as unknown as PageGlobal).rtc.setVideoBounds(i, b), [streamId, bounds] as const);

/** Polls the page's measure until `ok` holds; fails with the last one after `limitMs`. */
export async function untilMeasured(page: Page, ok: (m: PageMeasure) => boolean, what: string, limitMs = 20_000): Promise<PageMeasure> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const m = await measurePage(page);
    if (ok(m)) return m;
    if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(m)}`);
    await page.waitForTimeout(100);
  }
}

type Remote = PageMeasure['remote'][number];
const remoteOf = (m: PageMeasure, from: string, kind: 'audio' | 'video'): Remote | undefined =>
  m.remote.find((r) => r.kind === kind && r.userId === from);
/** Audio samples played that the decoder did not make up. */
const heardSamples = (r: Remote | undefined): number => (r ? r.totalSamplesReceived - r.concealedSamples : 0);

/**
 * Each remote video of `from` decoded and not black, each remote audio with energy, no
 * renegotiation failed; then more frames decoded and more audio samples heard (not concealed) later.
 */
export async function seesAndHears(page: Page, from: string, what: string, limitMs = 20_000): Promise<void> {
  const first = await untilMeasured(page, (m) => {
    const video = remoteOf(m, from, 'video');
    const audio = remoteOf(m, from, 'audio');
    return video !== undefined && video.framesDecoded > 5 && video.brightness > 10 && audio !== undefined && audio.totalAudioEnergy > 0;
  }, `${what} sees and hears ${from}`, limitMs);
  assert.deepEqual(first.events.filter((e) => e.startsWith('mediaError')), [], `${what}: renegotiations succeed`);
  const decoded = remoteOf(first, from, 'video')!.framesDecoded;
  const heard = heardSamples(remoteOf(first, from, 'audio'));
  await untilMeasured(page, (m) => (remoteOf(m, from, 'video')?.framesDecoded ?? 0) > decoded + 5 && heardSamples(remoteOf(m, from, 'audio')) > heard,
    `${what} keeps decoding and hearing ${from}`, limitMs);
}

/** The encoded frame inside an encrypted one (docs/protocol/media.md, "Encrypted encoded frames"), or undefined when `key` does not open it. */
export function openEncryptedFrame(key: Buffer, frame: Buffer, seq: number): Buffer | undefined {
  const clear = frame[frame.length - 2]!;
  const trailer = frame.subarray(frame.length - E2EE_TRAILER_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, e2eeNonce(seq));
  decipher.setAAD(Buffer.concat([frame.subarray(0, clear), trailer]));
  decipher.setAuthTag(frame.subarray(frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES, frame.length - E2EE_TRAILER_BYTES));
  const body = decipher.update(frame.subarray(clear, frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES));
  try {
    decipher.final();
  } catch {
    return undefined;
  }
  return Buffer.concat([frame.subarray(0, clear), body]);
}

/**
 * Each Opus payload as a media node forwarded it (TOC byte || ciphertext || tag || trailer) opens
 * with the stream key of its epoch, differs from what it opens to, and opens with no other key.
 */
export function assertEncryptedAudio(payloads: readonly Buffer[], keysByEpoch: ReadonlyMap<number, Buffer>): void {
  const wrongKey = randomBytes(32);
  for (const payload of payloads) {
    const trailer = decodeTrailer(payload);
    assert.ok(trailer, 'every forwarded frame carries the trailer');
    assert.equal(trailer.clear, 1);
    const key = keysByEpoch.get(trailer.epoch);
    assert.ok(key, `a key for epoch ${trailer.epoch}`);
    const plain = openEncryptedFrame(key, payload, trailer.seq);
    assert.ok(plain, 'the stream key opens the frame');
    assert.equal(plain.length, payload.length - E2EE_TAG_BYTES - E2EE_TRAILER_BYTES);
    assert.equal(plain[0], payload[0], 'the TOC byte stays clear');
    assert.notDeepEqual(plain.subarray(1), payload.subarray(1, plain.length), 'no media node had the encoded frame in the clear');
    assert.equal(openEncryptedFrame(wrongKey, payload, trailer.seq), undefined, 'another key opens nothing');
  }
}
