import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer as it is. */
  readonly body?: unknown;
  /** Source address of the connection (any 127.x.y.z works on loopback). */
  readonly localAddress?: string;
  /** Extra CA certificate for https URLs. */
  readonly ca?: Buffer;
}

/** Sends one request and resolves with the whole response: over a socket or in-process. */
export type Requester = (url: string, options?: RequestOptions) => Promise<HttpResult>;

/** A running platform as the helpers see it, whether a child process or in-process. */
export interface PlatformClient {
  readonly api: string;
  readonly token: string;
  readonly request: Requester;
}

/** The method, headers and bytes a request sends: an object body becomes JSON. */
export function encodeRequest(options: RequestOptions): { method: string; headers: Record<string, string>; payload: Buffer | undefined } {
  let payload: Buffer | undefined;
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) {
    if (Buffer.isBuffer(options.body)) payload = options.body;
    else if (typeof options.body === 'string') payload = Buffer.from(options.body);
    else {
      payload = Buffer.from(JSON.stringify(options.body));
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    headers['content-length'] ??= String(payload.length);
  }
  return { method: options.method ?? (payload ? 'POST' : 'GET'), headers, payload };
}

/** The result of a response read in full. */
export function httpResult(status: number, headers: IncomingHttpHeaders, text: string): HttpResult {
  return { status, headers, text, json<T>() { return JSON.parse(text) as T; } };
}

/** One HTTP(S) request over a fresh connection; resolves with the whole response. */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResult> {
  const target = new URL(url);
  const { method, headers, payload } = encodeRequest(options);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(target, {
      method,
      headers,
      agent: false,
      ...(options.localAddress !== undefined && { localAddress: options.localAddress }),
      ...(options.ca !== undefined && { ca: options.ca }),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(httpResult(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * POSTs `payload` with `Transfer-Encoding: chunked` (no Content-Length) in 1 KB chunks over a real
 * socket; the server may answer and close before it has read everything.
 */
export function sendChunked(url: string, headers: Record<string, string>, payload: Buffer): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(httpResult(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    for (let i = 0; i < payload.length; i += 1024) req.write(payload.subarray(i, i + 1024));
    req.end();
  });
}

/** `Authorization: Basic base64(appId:appSecret)`. */
export function basic(appId: string, appSecret: string): string {
  return `Basic ${Buffer.from(`${appId}:${appSecret}`).toString('base64')}`;
}

let addressCounter = 0;
/** A loopback source address no other request of this test process has used. */
export function freshAddress(): string {
  addressCounter += 1;
  const n = (process.pid % 200) * 256 + addressCounter;
  return `127.${(n >> 16) & 255 || 1}.${(n >> 8) & 255}.${(n & 255) || 1}`;
}
