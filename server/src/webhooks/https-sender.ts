import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { isPrivateAddress } from './webhook.ts';
import type { WebhookTargets } from '../core/ports.ts';
import type { WebhookPost, WebhookSender } from './delivery.ts';

export interface HttpsSenderOptions {
  /** Whole attempt, from connect to the end of the response (default 10 s). */
  readonly timeoutMs: number;
  /** Deliver to loopback, private and link-local addresses too (development and tests only). */
  readonly allowPrivate: boolean;
  /** A PEM CA trusted besides the system's (a receiver with a private CA). */
  readonly ca?: Buffer | undefined;
}

/** What a refused target is reported as, in the delivery log and by the customer API. */
export const PRIVATE_TARGET = 'the endpoint resolves to a loopback, private or link-local address';
const MAX_RESPONSE_BYTES = 64 * 1024;
const STOPPED = 'the platform stopped during the attempt';

/**
 * POSTs with node:https. The address check runs in the socket's own DNS look-up, so the address
 * checked is the address connected to (a name that resolves to a public address when the endpoint
 * is saved and to a private one later is refused too).
 */
export function createHttpsSender(options: HttpsSenderOptions): WebhookSender & { close(): void } {
  const lookup: LookupFunction = (hostname, opts, callback) => {
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const allowed = options.allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (allowed.length === 0) {
        return callback(Object.assign(new Error(PRIVATE_TARGET), { code: 'EPRIVATE' }), '', 0);
      }
      if (opts.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
  const agent = new Agent({
    keepAlive: true, maxSockets: 4, lookup,
    ...(options.ca && { ca: [...rootCertificates, options.ca.toString('utf8')] }),
  });

  const send: WebhookSender = async (post) => {
    const url = new URL(post.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // an address literal never goes through the look-up
    if (!options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) return { error: PRIVATE_TARGET };
    if (post.signal.aborted) return { error: STOPPED };
    return postOnce(url, post);
  };

  const postOnce = (url: URL, post: WebhookPost): ReturnType<WebhookSender> => new Promise((resolve) => {
    let settled = false;
    // every call of done() comes from an event or timer, after all of these are set
    const done = (result: Awaited<ReturnType<WebhookSender>>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      post.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const req = request(url, {
      method: 'POST', agent,
      headers: { ...post.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(post.body) },
    }, (res) => {
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) res.destroy();
      });
      res.on('close', () => done({ statusCode: res.statusCode ?? 0 }));
      res.on('error', () => done({ statusCode: res.statusCode ?? 0 }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ error: `no answer within ${options.timeoutMs / 1000} s` });
    }, options.timeoutMs);
    function onAbort(): void {
      req.destroy();
      done({ error: STOPPED });
    }
    post.signal.addEventListener('abort', onAbort);
    // the code, never the message: it could quote the URL, whose query may hold a token of the receiver
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ error: err.code === 'EPRIVATE' ? PRIVATE_TARGET : `connection failed (${err.code ?? 'error'})` }));
    req.end(post.body);
  });
  return Object.assign(send, { close: () => agent.destroy() });
}

/** Checks a new endpoint's URL: refused when its name resolves only to private addresses. */
export function createWebhookTargets(allowPrivate: boolean): WebhookTargets {
  return {
    async problem(raw) {
      if (allowPrivate) return undefined;
      const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0) return isPrivateAddress(host) ? PRIVATE_TARGET : undefined;
      const addresses = await new Promise<LookupAddress[]>((resolve) => {
        dnsLookup(host, { all: true }, (err, list) => resolve(err ? [] : list));
      });
      // a name that does not resolve yet is accepted: deliveries retry until it does
      return addresses.length > 0 && addresses.every((a) => isPrivateAddress(a.address)) ? PRIVATE_TARGET : undefined;
    },
  };
}
