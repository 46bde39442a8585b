/**
 * End-to-end encryption of encoded audio and video frames (docs/protocol/media.md, "Encrypted
 * encoded frames"), run in a dedicated worker on the browser's encoded transforms.
 *
 * `e2eeWorkerMain` is the worker's whole program: it is serialized with `Function.prototype.toString`
 * into a Blob URL, so it must not use anything from outside its own body (no imports, no module
 * constants). Its layout constants repeat those of `@rtc/protocol`'s e2ee-frame.ts; a unit test
 * holds the two to the same bytes.
 *
 * Simulcast: Chromium runs one transform per sender, and it gets the frames of every layer of that
 * sender. Frames are numbered per stream and epoch, whatever their layer, so no number repeats
 * under a key. A receiver sees the numbers of the layer the server forwards (a subsequence: gaps),
 * and after a switch of layer possibly a number a little lower than the last one it took; the
 * replay window takes any number not seen within 1024 of the highest, so both are fine.
 */
import type { MediaTrackKind, WorkerLike } from './dom.ts';

/** A transform's options: which slot (transceiver) it serves, in which direction, for which kind. */
export interface TransformOptions {
  readonly slot: number;
  readonly role: 'encrypt' | 'decrypt';
  readonly kind: MediaTrackKind;
}

/** Messages from the page to the worker. */
export type WorkerCommand =
  | { readonly op: 'bind'; readonly slot: number; readonly streamId: number | undefined }
  | { readonly op: 'key'; readonly streamId: number; readonly epoch: number; readonly key: unknown; readonly own: boolean; readonly seqBase: number }
  | { readonly op: 'forget'; readonly streamId: number }
  | { readonly op: 'streams'; readonly options: TransformOptions; readonly readable: unknown; readonly writable: unknown }
  | { readonly op: 'stats'; readonly id: number };

/** Frame counters of the worker, for diagnostics and tests. */
export interface E2eeStats {
  /** Frames sealed and sent. */
  readonly encrypted: number;
  /** Frames opened and passed to the decoder. */
  readonly decrypted: number;
  /** Frames dropped: no key yet, no trailer, an unknown epoch, a failed authentication, a replay. */
  readonly dropped: number;
}

/** Messages from the worker to the page. */
export type WorkerReply = { readonly op: 'stats'; readonly id: number; readonly stats: E2eeStats };

/** The worker program. Self-contained: see the module comment. */
export function e2eeWorkerMain(scope: unknown): void {
  interface Frame { data: ArrayBuffer }
  interface Controller { enqueue(frame: Frame): void }
  interface Transformer {
    readonly readable: { pipeThrough(t: unknown): { pipeTo(w: unknown): Promise<void> } };
    readonly writable: unknown;
    readonly options: { slot: number; role: 'encrypt' | 'decrypt'; kind: 'audio' | 'video' };
    sendKeyFrameRequest?(): Promise<void>;
    generateKeyFrame?(): Promise<void>;
  }
  interface Scope {
    onrtctransform: ((event: { transformer: Transformer }) => void) | null;
    onmessage: ((event: { data: Record<string, unknown> }) => void) | null;
    postMessage(message: unknown): void;
    TransformStream: new (t: { transform(frame: Frame, controller: Controller): Promise<void> }) => unknown;
    crypto: { subtle: {
      encrypt(alg: unknown, key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
      decrypt(alg: unknown, key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
    } };
  }
  interface SendKey { epoch: number; key: unknown; seq: number }
  interface RecvKey { epoch: number; key: unknown; highest: number; seen: Uint8Array }

  const self = scope as Scope;
  const TRAILER = 12;
  const TAG = 16;
  const MARKER = 0xe2;
  const LABEL = 4;
  const WINDOW = 1024;
  const TWO_32 = 2 ** 32;
  const KEY_FRAME_ASK_MS = 500;

  const sendKeys = new Map<number, SendKey>();
  const recvKeys = new Map<number, RecvKey[]>();
  const slots = new Map<number, number | undefined>();
  const pendingKeyFrame = new Set<number>();
  const stats = { encrypted: 0, decrypted: 0, dropped: 0 };

  const clearBytes = (kind: 'audio' | 'video', frame: Uint8Array): number => {
    if (kind === 'audio') return Math.min(1, frame.length);
    return Math.min(frame.length > 0 && (frame[0]! & 1) === 0 ? 10 : 3, frame.length);
  };
  const nonce = (seq: number): Uint8Array => {
    const n = new Uint8Array(12);
    const v = new DataView(n.buffer);
    v.setUint32(0, LABEL);
    v.setUint32(4, Math.floor(seq / TWO_32));
    v.setUint32(8, seq % TWO_32);
    return n;
  };
  const trailerOf = (epoch: number, seq: number, clear: number): Uint8Array => {
    const t = new Uint8Array(TRAILER);
    const v = new DataView(t.buffer);
    v.setUint16(0, epoch);
    v.setUint32(2, Math.floor(seq / TWO_32));
    v.setUint32(6, seq % TWO_32);
    v.setUint8(10, clear);
    v.setUint8(11, MARKER);
    return t;
  };
  const concat = (...parts: Uint8Array[]): Uint8Array => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  // the replay window of the media protocol (protocol/src/replay-window.ts): a sequence number is
  // accepted once, and only within WINDOW of the highest
  const fresh = (k: RecvKey, seq: number): boolean => seq > k.highest || (k.highest - seq < WINDOW && k.seen[seq % WINDOW] === 0);
  const commit = (k: RecvKey, seq: number): void => {
    if (seq > k.highest) {
      const from = Math.max(k.highest + 1, seq - WINDOW + 1);
      for (let s = from; s <= seq; s++) k.seen[s % WINDOW] = 0;
      k.highest = seq;
    }
    k.seen[seq % WINDOW] = 1;
  };

  const encrypt = async (t: Transformer, frame: Frame, controller: Controller): Promise<void> => {
    const streamId = slots.get(t.options.slot);
    const key = streamId === undefined ? undefined : sendKeys.get(streamId);
    if (!key) {
      // never send a frame in the clear
      stats.dropped += 1;
      return;
    }
    const data = new Uint8Array(frame.data);
    const clear = clearBytes(t.options.kind, data);
    // one counter for every layer of the stream
    key.seq += 1;
    const trailer = trailerOf(key.epoch, key.seq, clear);
    const head = data.subarray(0, clear);
    const sealed = await self.crypto.subtle.encrypt(
      { name: 'AES-GCM', iv: nonce(key.seq), additionalData: concat(head, trailer), tagLength: 128 }, key.key, data.subarray(clear),
    );
    frame.data = concat(head, new Uint8Array(sealed), trailer).buffer as ArrayBuffer;
    stats.encrypted += 1;
    controller.enqueue(frame);
  };

  const askKeyFrame = (t: Transformer): void => {
    const slot = t.options.slot;
    if (pendingKeyFrame.has(slot) || typeof t.sendKeyFrameRequest !== 'function') return;
    pendingKeyFrame.add(slot);
    t.sendKeyFrameRequest().catch(() => undefined);
    setTimeout(() => pendingKeyFrame.delete(slot), KEY_FRAME_ASK_MS);
  };

  const decrypt = async (t: Transformer, frame: Frame, controller: Controller): Promise<void> => {
    const data = new Uint8Array(frame.data);
    const streamId = slots.get(t.options.slot);
    const keys = streamId === undefined ? undefined : recvKeys.get(streamId);
    if (data.length < TRAILER + TAG || data[data.length - 1] !== MARKER || !keys) {
      stats.dropped += 1;
      return;
    }
    const v = new DataView(data.buffer, data.byteOffset + data.length - TRAILER, TRAILER);
    const epoch = v.getUint16(0);
    const high = v.getUint32(2);
    const seq = high * TWO_32 + v.getUint32(6);
    const clear = v.getUint8(10);
    const key = keys.find((k) => k.epoch === epoch);
    if (!key || high >= 2 ** 21 || seq === 0 || clear > data.length - TRAILER - TAG || !fresh(key, seq)) {
      stats.dropped += 1;
      return;
    }
    const head = data.subarray(0, clear);
    const trailer = data.subarray(data.length - TRAILER);
    let plain: ArrayBuffer;
    try {
      plain = await self.crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: nonce(seq), additionalData: concat(head, trailer), tagLength: 128 }, key.key,
        data.subarray(clear, data.length - TRAILER),
      );
    } catch {
      stats.dropped += 1;
      askKeyFrame(t);
      return;
    }
    if (!fresh(key, seq)) {
      stats.dropped += 1;
      return;
    }
    commit(key, seq);
    frame.data = concat(head, new Uint8Array(plain)).buffer as ArrayBuffer;
    stats.decrypted += 1;
    controller.enqueue(frame);
  };

  const run = (t: Transformer): void => {
    if (!slots.has(t.options.slot)) slots.set(t.options.slot, undefined);
    const step = t.options.role === 'encrypt' ? encrypt : decrypt;
    const stream = new self.TransformStream({ transform: (frame, controller) => step(t, frame, controller) });
    // the pipe ends when the transceiver stops; nothing to report
    t.readable.pipeThrough(stream).pipeTo(t.writable).catch(() => undefined);
  };

  self.onrtctransform = (event) => run(event.transformer);
  self.onmessage = (event) => {
    const m = event.data;
    switch (m['op']) {
      case 'bind':
        slots.set(m['slot'] as number, m['streamId'] as number | undefined);
        return;
      case 'key': {
        const streamId = m['streamId'] as number;
        const epoch = m['epoch'] as number;
        if (m['own'] === true) {
          // a sequence number is never used twice under one key: numbering goes on for an epoch
          // already held, and starts at this worker's base (past every earlier worker's) for a new one
          const held = sendKeys.get(streamId);
          if (held?.epoch === epoch) held.key = m['key'];
          else sendKeys.set(streamId, { epoch, key: m['key'], seq: m['seqBase'] as number });
          return;
        }
        const known = recvKeys.get(streamId) ?? [];
        // the same epoch again: the same key, and its replay window stays
        if (known.some((k) => k.epoch === epoch)) return;
        const kept = known;
        // the current key and the previous one, for frames sealed just before a rotation
        recvKeys.set(streamId, [{ epoch, key: m['key'], highest: 0, seen: new Uint8Array(WINDOW) }, ...kept].slice(0, 2));
        return;
      }
      case 'forget':
        sendKeys.delete(m['streamId'] as number);
        recvKeys.delete(m['streamId'] as number);
        return;
      case 'streams': {
        const readable = m['readable'] as Transformer['readable'];
        run({ readable, writable: m['writable'], options: m['options'] as Transformer['options'] });
        return;
      }
      case 'stats':
        self.postMessage({ op: 'stats', id: m['id'], stats: { ...stats } });
        return;
      default:
        return;
    }
  };
}

/** The page's side of the encryption worker. */
export class E2eeWorker {
  readonly worker: WorkerLike;
  private nextId = 1;
  private readonly waiting = new Map<number, (stats: E2eeStats) => void>();

  constructor(worker: WorkerLike) {
    this.worker = worker;
    worker.addEventListener('message', (event) => {
      const reply = event.data as WorkerReply;
      if (reply.op !== 'stats') return;
      this.waiting.get(reply.id)?.(reply.stats);
      this.waiting.delete(reply.id);
    });
  }

  post(command: WorkerCommand, transfer: readonly unknown[] = []): void {
    this.worker.postMessage(command, transfer);
  }

  stats(): Promise<E2eeStats> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.post({ op: 'stats', id });
    });
  }

  terminate(): void {
    this.worker.terminate();
    for (const resolve of this.waiting.values()) resolve({ encrypted: 0, decrypted: 0, dropped: 0 });
    this.waiting.clear();
  }
}

/** The worker program's source, as a classic worker script. */
export function e2eeWorkerSource(): string {
  return `(${e2eeWorkerMain.toString()})(self);`;
}
