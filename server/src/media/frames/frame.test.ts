import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { importAesKey, open as sdkOpen, seal as sdkSeal } from '../../../../sdk/app/src/crypto.ts';
import { decodeHeader, encodeHeader, KIND_CODE, NONCE_LABEL } from '@rtc/protocol';
import { open, readHeader, seal } from './frame.ts';

const header = { kind: KIND_CODE.video, epoch: 7, streamId: 0xfffffffe, seq: 2 ** 40 + 5 };

describe('frame codec', () => {
  it('seals and opens; the header round-trips', () => {
    const key = randomBytes(32);
    const sealed = seal(key, NONCE_LABEL.streamFrame, header, Buffer.from('payload'));
    assert.equal(sealed.length, 16 + 7 + 16);
    assert.deepEqual(readHeader(sealed), header);
    assert.equal(open(key, NONCE_LABEL.streamFrame, sealed)?.toString(), 'payload');
  });

  it('authenticates every header byte and the nonce label', () => {
    const key = randomBytes(32);
    const sealed = seal(key, NONCE_LABEL.streamFrame, header, Buffer.from('payload'));
    for (let i = 0; i < 16; i++) {
      const tampered = Buffer.from(sealed);
      tampered[i]! ^= 1;
      assert.equal(open(key, NONCE_LABEL.streamFrame, tampered), undefined, `header byte ${i}`);
    }
    assert.equal(open(key, NONCE_LABEL.clientControl, sealed), undefined);
    const body = Buffer.from(sealed);
    body[20]! ^= 1;
    assert.equal(open(key, NONCE_LABEL.streamFrame, body), undefined);
  });

  it('refuses headers of another version, too short, or with sequence 0 or >= 2^53', () => {
    const ok = seal(randomBytes(32), 1, header, Buffer.alloc(0));
    assert.ok(readHeader(ok));
    assert.equal(readHeader(ok.subarray(0, 31)), undefined);
    const v2 = Buffer.from(ok);
    v2[0] = 2;
    assert.equal(readHeader(v2), undefined);
    assert.equal(readHeader(seal(randomBytes(32), 1, { ...header, seq: 0 }, Buffer.alloc(0))), undefined);
    const big = Buffer.from(ok);
    big.writeUInt32BE(2 ** 21, 8);
    assert.equal(readHeader(big), undefined);
  });

  it('interoperates with the app SDK (WebCrypto) in both directions', async () => {
    const raw = randomBytes(32);
    const key = await importAesKey(raw);
    const fromSdk = Buffer.from(await sdkSeal(key, NONCE_LABEL.streamFrame, encodeHeader(header), Buffer.from('from the sdk')));
    assert.equal(open(raw, NONCE_LABEL.streamFrame, fromSdk)?.toString(), 'from the sdk');
    const fromServer = seal(raw, NONCE_LABEL.serverControl, header, Buffer.from('from the server'));
    assert.equal(Buffer.from((await sdkOpen(key, NONCE_LABEL.serverControl, fromServer))!).toString(), 'from the server');
    assert.deepEqual(decodeHeader(fromServer), header);
  });
});
