import { createHmac } from 'node:crypto';
import { ID_PREFIX } from '@rtc/protocol';
import { fromB64u, safeEqual } from '../core/encoding.ts';

// rvk_ + base64url(version 1B | project 16B | grant id 16B | expiry u32 BE | MAC 16B)
const VERSION = 1;
const BODY_LENGTH = 1 + 16 + 16 + 4;
const MAC_LENGTH = 16;

export interface HandleContents {
  /** Project id with its `prj_` prefix. */
  readonly projectId: string;
  readonly grantId: Buffer;
  readonly expiresAt: number;
}

function mac(key: Buffer, body: Buffer): Buffer {
  return createHmac('sha256', key).update('rtc/revocation-handle/v1').update(body).digest().subarray(0, MAC_LENGTH);
}

/** Builds a tamper-evident revocation handle; checking it needs the key, not a store look-up. */
export function encodeHandle(key: Buffer, contents: HandleContents): string {
  const project = fromB64u(contents.projectId.slice(ID_PREFIX.project.length));
  if (!project || project.length !== 16 || contents.grantId.length !== 16) {
    throw new TypeError('encodeHandle: project id and grant id must each be 16 bytes');
  }
  const body = Buffer.alloc(BODY_LENGTH);
  body.writeUInt8(VERSION, 0);
  project.copy(body, 1);
  contents.grantId.copy(body, 17);
  body.writeUInt32BE(contents.expiresAt, 33);
  return ID_PREFIX.handle + Buffer.concat([body, mac(key, body)]).toString('base64url');
}

/** Returns the handle's contents, or undefined when it is malformed or altered. */
export function decodeHandle(key: Buffer, handle: string): HandleContents | undefined {
  if (!handle.startsWith(ID_PREFIX.handle)) return undefined;
  const bytes = fromB64u(handle.slice(ID_PREFIX.handle.length));
  if (!bytes || bytes.length !== BODY_LENGTH + MAC_LENGTH) return undefined;
  const body = bytes.subarray(0, BODY_LENGTH);
  if (!safeEqual(mac(key, body), bytes.subarray(BODY_LENGTH)) || body.readUInt8(0) !== VERSION) return undefined;
  return {
    projectId: ID_PREFIX.project + body.subarray(1, 17).toString('base64url'),
    grantId: Buffer.from(body.subarray(17, 33)),
    expiresAt: body.readUInt32BE(33),
  };
}
