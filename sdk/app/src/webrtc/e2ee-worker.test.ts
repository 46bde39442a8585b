import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { clearBytes, decodeTrailer, e2eeNonce, E2EE_TAG_BYTES, E2EE_TRAILER_BYTES } from '@rtc/protocol';
import { e2eeWorkerMain, type E2eeStats } from './e2ee-worker.ts';

interface Frame { data: ArrayBuffer }

/** The worker program in this process: messages in, transforms started as Chromium starts them (one per sender or receiver). */
function startWorker() {
  const scope = {
    onrtctransform: null as ((event: { transformer: unknown }) => void) | null,
    onmessage: null as ((event: { data: Record<string, unknown> }) => void) | null,
    replies: [] as unknown[],
    postMessage(message: unknown) {
      this.replies.push(message);
    },
    TransformStream,
    crypto: globalThis.crypto,
  };
  e2eeWorkerMain(scope);
  return {
    post: (data: Record<string, unknown>) => scope.onmessage!({ data }),
    /** Runs frames through a transform of `slot`; resolves with what came out. */
    run: async (slot: number, role: 'encrypt' | 'decrypt', frames: readonly Uint8Array[]): Promise<Uint8Array[]> => {
      const out: Uint8Array[] = [];
      const readable = new ReadableStream<Frame>({
        start(controller) {
          for (const f of frames) controller.enqueue({ data: f.slice().buffer });
          controller.close();
        },
      });
      let done!: () => void;
      const finished = new Promise<void>((resolve) => (done = resolve));
      const writable = new WritableStream<Frame>({ write: (f) => void out.push(new Uint8Array(f.data)), close: () => done() });
      scope.onrtctransform!({ transformer: { readable, writable, options: { slot, role, kind: 'video' } } });
      await finished;
      return out;
    },
    stats: async (): Promise<E2eeStats> => {
      scope.onmessage!({ data: { op: 'stats', id: 1 } });
      return (scope.replies.at(-1) as { stats: E2eeStats }).stats;
    },
  };
}

/** A VP8-looking frame: the low bit of the first byte is 0 for a key frame. */
const vp8 = (key: boolean, tag: number, length = 40): Uint8Array => Uint8Array.from({ length }, (_, i) => (i === 0 ? (key ? 0x10 : 0x11) : tag));

async function aesKey(raw: Buffer): Promise<Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>> {
  return globalThis.crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

/** Opens a frame as docs/protocol/media.md, section 11 writes it, with node:crypto. */
function openFrame(key: Buffer, frame: Uint8Array): Uint8Array | undefined {
  const trailer = decodeTrailer(frame);
  if (!trailer) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, e2eeNonce(trailer.seq));
  decipher.setAAD(Buffer.concat([frame.subarray(0, trailer.clear), frame.subarray(frame.length - E2EE_TRAILER_BYTES)]));
  decipher.setAuthTag(frame.subarray(frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES, frame.length - E2EE_TRAILER_BYTES));
  const body = decipher.update(frame.subarray(trailer.clear, frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES));
  decipher.final();
  return new Uint8Array(Buffer.concat([frame.subarray(0, trailer.clear), body]));
}

describe('the frame encryption worker with simulcast', () => {
  it('numbers the frames of every layer of a sender from one counter per stream and epoch: no number twice', async () => {
    const raw = randomBytes(32);
    const worker = startWorker();
    worker.post({ op: 'bind', slot: 0, streamId: 5 });
    worker.post({ op: 'key', streamId: 5, epoch: 1, key: await aesKey(raw), own: true, seqBase: 0 });
    // Chromium hands the one transform of a simulcast sender the frames of all its layers, interleaved
    const layers = ['q', 'h', 'f'];
    const input = Array.from({ length: 12 }, (_, i) => vp8(i < 3, layers[i % 3]!.charCodeAt(0)));
    const sealed = await worker.run(0, 'encrypt', input);
    assert.equal(sealed.length, input.length);
    const trailers = sealed.map((f) => decodeTrailer(f)!);
    assert.deepEqual(trailers.map((t) => t.seq), Array.from({ length: 12 }, (_, i) => i + 1));
    assert.ok(trailers.every((t) => t.epoch === 1));
    sealed.forEach((frame, i) => {
      assert.equal(trailers[i]!.clear, clearBytes('video', input[i]!), 'the VP8 payload header stays clear');
      assert.deepEqual(openFrame(raw, frame), input[i], 'the stream key opens every layer');
    });
  });

  it('opens the layers a server switches between, in and out of order, and drops a repeated number', async () => {
    const raw = randomBytes(32);
    const key = await aesKey(raw);
    const sender = startWorker();
    sender.post({ op: 'bind', slot: 0, streamId: 5 });
    sender.post({ op: 'key', streamId: 5, epoch: 1, key, own: true, seqBase: 0 });
    // capture instants 0..5, each encoded as q, h, f: sequence numbers 1..18
    const sealed = await sender.run(0, 'encrypt', Array.from({ length: 18 }, (_, i) => vp8(i < 3 || (i >= 9 && i < 12), 0x40 + (i % 3))));
    const bySeq = new Map(sealed.map((f) => [decodeTrailer(f)!.seq, f]));
    // the server forwards f (3, 6, 9), then switches down to q from its key frame of instant 3 (10), but a q frame
    // of instant 2 (7, lower than 9 and never seen) overtakes it; then 13, 16; and 16 once more (a replay)
    const forwarded = [3, 6, 9, 7, 10, 13, 16, 16].map((s) => bySeq.get(s)!);
    const receiver = startWorker();
    receiver.post({ op: 'bind', slot: 0, streamId: 5 });
    receiver.post({ op: 'key', streamId: 5, epoch: 1, key, own: false, seqBase: 0 });
    const opened = await receiver.run(0, 'decrypt', forwarded);
    assert.equal(opened.length, 7, 'every frame once, the replay dropped');
    assert.deepEqual(await receiver.stats(), { encrypted: 0, decrypted: 7, dropped: 1 });
    assert.deepEqual(opened.map((f) => f[1]), [0x42, 0x42, 0x42, 0x40, 0x40, 0x40, 0x40]);
  });
});
