import { MAX_STREAM_ID } from '@rtc/protocol';
import { fromB64u } from '../core/encoding.ts';
import { MEDIA_KINDS, NONCE_BYTES, type MediaKind } from './limits.ts';

/** `join`: the first message of a client, as text (docs/protocol/media.md, "Handshake"). */
export interface JoinMessage {
  readonly grant: string;
  readonly nonce: Buffer;
  readonly proof: Buffer;
}

/** Control messages a joined client sends, sealed under its client-to-server key. */
export type ClientControl =
  | { readonly type: 'publish'; readonly id: number; readonly streamId: number; readonly kind: MediaKind }
  | { readonly type: 'unpublish'; readonly id: number; readonly streamId: number }
  | { readonly type: 'renew'; readonly id: number; readonly grant: string; readonly nonce: Buffer; readonly proof: Buffer }
  | { readonly type: 'ping'; readonly id: number }
  | { readonly type: 'leave' };

const MAX_GRANT_CHARS = 8192;
const MAX_REQUEST_ID = 0xffffffff;

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  join: ['type', 'grant', 'nonce', 'proof'],
  publish: ['type', 'id', 'stream_id', 'kind'],
  unpublish: ['type', 'id', 'stream_id'],
  renew: ['type', 'id', 'grant', 'nonce', 'proof'],
  ping: ['type', 'id'],
  leave: ['type'],
};

/** A JSON object whose fields are exactly those of its `type`; undefined for anything else. */
function parseTyped(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const type = record['type'];
  const fields = typeof type === 'string' && Object.hasOwn(FIELDS, type) ? FIELDS[type] : undefined;
  if (!fields) return undefined;
  const keys = Object.keys(record);
  if (keys.length !== fields.length || !keys.every((k) => fields.includes(k))) return undefined;
  return record;
}

function bytes32(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || value.length !== 43) return undefined;
  const decoded = fromB64u(value);
  return decoded && decoded.length === NONCE_BYTES ? decoded : undefined;
}

function grantText(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_GRANT_CHARS ? value : undefined;
}

function requestId(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_REQUEST_ID ? (value as number) : undefined;
}

function streamId(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_STREAM_ID ? (value as number) : undefined;
}

export function parseJoin(text: string): JoinMessage | undefined {
  const r = parseTyped(text);
  if (!r || r['type'] !== 'join') return undefined;
  const grant = grantText(r['grant']);
  const nonce = bytes32(r['nonce']);
  const proof = bytes32(r['proof']);
  return grant && nonce && proof ? { grant, nonce, proof } : undefined;
}

export function parseClientControl(text: string): ClientControl | undefined {
  const r = parseTyped(text);
  if (!r) return undefined;
  const id = requestId(r['id']);
  switch (r['type']) {
    case 'publish': {
      const stream = streamId(r['stream_id']);
      const kind = r['kind'];
      if (id === undefined || stream === undefined || !(MEDIA_KINDS as readonly unknown[]).includes(kind)) return undefined;
      return { type: 'publish', id, streamId: stream, kind: kind as MediaKind };
    }
    case 'unpublish': {
      const stream = streamId(r['stream_id']);
      return id === undefined || stream === undefined ? undefined : { type: 'unpublish', id, streamId: stream };
    }
    case 'renew': {
      const grant = grantText(r['grant']);
      const nonce = bytes32(r['nonce']);
      const proof = bytes32(r['proof']);
      return id === undefined || !grant || !nonce || !proof ? undefined : { type: 'renew', id, grant, nonce, proof };
    }
    case 'ping':
      return id === undefined ? undefined : { type: 'ping', id };
    case 'leave':
      return { type: 'leave' };
    default:
      return undefined;
  }
}
