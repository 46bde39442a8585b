import { createCipheriv, createDecipheriv } from 'node:crypto';
import { HEADER_BYTES, MAX_SEQ_HIGH, PROTOCOL_VERSION, TAG_BYTES, type FrameHeader } from '@rtc/protocol';

export type { FrameHeader };

const TWO_32 = 2 ** 32;

/** Reads the header in place (the Buffer form of `decodeHeader`); undefined when the message is too short, of another version, or its sequence is out of range. */
export function readHeader(message: Buffer): FrameHeader | undefined {
  if (message.length < HEADER_BYTES + TAG_BYTES || message[0] !== PROTOCOL_VERSION) return undefined;
  const high = message.readUInt32BE(8);
  if (high >= MAX_SEQ_HIGH) return undefined;
  const seq = high * TWO_32 + message.readUInt32BE(12);
  if (seq === 0) return undefined;
  return { kind: message[1]!, epoch: message.readUInt16BE(2), streamId: message.readUInt32BE(4), seq };
}

export function writeHeader(target: Buffer, header: FrameHeader): void {
  target[0] = PROTOCOL_VERSION;
  target[1] = header.kind;
  target.writeUInt16BE(header.epoch, 2);
  target.writeUInt32BE(header.streamId, 4);
  target.writeUInt32BE(Math.floor(header.seq / TWO_32), 8);
  target.writeUInt32BE(header.seq % TWO_32, 12);
}

// one scratch nonce: every use below is synchronous
const nonce = Buffer.alloc(12);

function setNonce(label: number, message: Buffer): Buffer {
  nonce.writeUInt32BE(label, 0);
  message.copy(nonce, 4, 8, 16);
  return nonce;
}

/** Header, AES-256-GCM ciphertext of `plaintext` under `key`, tag; nonce = label || sequence. */
export function seal(key: Buffer, label: number, header: FrameHeader, plaintext: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + plaintext.length + TAG_BYTES);
  writeHeader(out, header);
  const cipher = createCipheriv('aes-256-gcm', key, setNonce(label, out), { authTagLength: TAG_BYTES });
  cipher.setAAD(out.subarray(0, HEADER_BYTES));
  const body = cipher.update(plaintext);
  body.copy(out, HEADER_BYTES);
  cipher.final();
  cipher.getAuthTag().copy(out, HEADER_BYTES + body.length);
  return out;
}

/** The plaintext of a sealed message, or undefined when it does not authenticate under `key`. */
export function open(key: Buffer, label: number, message: Buffer): Buffer | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, setNonce(label, message), { authTagLength: TAG_BYTES });
  decipher.setAAD(message.subarray(0, HEADER_BYTES));
  decipher.setAuthTag(message.subarray(message.length - TAG_BYTES));
  const plaintext = decipher.update(message.subarray(HEADER_BYTES, message.length - TAG_BYTES));
  try {
    decipher.final();
  } catch {
    return undefined;
  }
  return plaintext;
}
