import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSse, SignalingClient, type SseFrame } from './signaling.ts';

/** A real fetch Response whose body arrives in the given chunks, one per read. */
function responseOf(chunks: readonly (string | Uint8Array)[], keepOpen = false): Response {
  const encoder = new TextEncoder();
  let i = 0;
  return new Response(new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i];
      i += 1;
      if (chunk !== undefined) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      else if (!keepOpen) controller.close();
    },
  }));
}

async function frames(chunks: readonly (string | Uint8Array)[]): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  for await (const frame of readSse(responseOf(chunks), new AbortController().signal, 5000)) out.push(frame);
  return out;
}

describe('readSse', () => {
  it('reads id, event and data, and skips comments and the retry field', async () => {
    assert.deepEqual(await frames(['retry: 1000\n\n: keepalive\n\nid: e.1\nevent: join\ndata: {"a":1}\n\n']), [
      { id: 'e.1', event: 'join', data: '{"a":1}' },
    ]);
  });

  it('joins lines split across chunks, whatever the line ending', async () => {
    const text = 'id: e.2\r\nevent: message\r\ndata: {"b":2}\r\n\r\nevent: ready\rdata: {}\r\rdata: x\n\n';
    const byteByByte = [...new TextEncoder().encode(text)].map((b) => new Uint8Array([b]));
    const expected = [
      { id: 'e.2', event: 'message', data: '{"b":2}' },
      { id: undefined, event: 'ready', data: '{}' },
      { id: undefined, event: 'message', data: 'x' },
    ];
    assert.deepEqual(await frames(byteByByte), expected);
    assert.deepEqual(await frames([text]), expected);
    // a CRLF cut between its two characters is one line end, not two
    assert.deepEqual(await frames(['data: a\r', '\n\r\n']), [{ id: undefined, event: 'message', data: 'a' }]);
  });

  it('decodes UTF-8 split inside a character', async () => {
    const bytes = new TextEncoder().encode('data: "é€"\n\n');
    assert.deepEqual(await frames([bytes.slice(0, 8), bytes.slice(8, 10), bytes.slice(10)]), [
      { id: undefined, event: 'message', data: '"é€"' },
    ]);
  });

  it('follows the field rules: multi-line data, no space after the colon, bare field names, NUL ids', async () => {
    assert.deepEqual(await frames(['data:one\ndata: two\nid\nunknown: x\n\nevent: e\n\nid: a\u0000b\ndata: z\n\n']), [
      { id: '', event: 'message', data: 'one\ntwo' },
      { id: undefined, event: 'message', data: 'z' },
    ]);
  });

  it('drops an unfinished event at the end of the body', async () => {
    assert.deepEqual(await frames(['data: complete\n\ndata: cut off']), [{ id: undefined, event: 'message', data: 'complete' }]);
  });

  it('throws when the stream goes silent, and when aborted', async () => {
    const silent = readSse(responseOf([': hi\n\n'], true), new AbortController().signal, 50);
    await assert.rejects(silent.next(), /went silent/);
    const abort = new AbortController();
    const aborted = readSse(responseOf([], true), abort.signal, 5000);
    setTimeout(() => abort.abort(new Error('stopped')), 20);
    await assert.rejects(aborted.next(), /stopped/);
  });
});

describe('SignalingClient options', () => {
  it('refuses a missing URL or token at construction', () => {
    assert.throws(() => new SignalingClient({ url: 'ftp://x', token: 't' }), TypeError);
    assert.throws(() => new SignalingClient({ url: 'https://signal.example', token: '' }), TypeError);
  });
});
