/** A real HTTPS webhook receiver for tests: verifies every delivery with the server SDK and keeps the events. */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookEvent } from '../../sdk/server/src/index.ts';

export interface ReceivedDelivery {
  readonly event: WebhookEvent;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface WebhookReceiver {
  /** `https://127.0.0.1:<port>/hook`; the same across `stop()` and `start()`. */
  readonly url: string;
  /** The secrets deliveries are verified with (set after the endpoint is created). */
  secrets: string[];
  /** The status a verified delivery is answered with (default 204). */
  answer: number;
  /** While true, verified deliveries are kept unanswered (a receiver in the middle of its work) and listed in `held`. */
  hold: boolean;
  /** The deliveries kept unanswered, in arrival order; one whose sender went away stays listed. */
  readonly held: ReceivedDelivery[];
  /** Resolves once `predicate` holds for the held deliveries (checked on each arrival). */
  waitForHeld(predicate: (events: readonly WebhookEvent[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Every verified delivery, retries included, in arrival order. */
  readonly deliveries: ReceivedDelivery[];
  /** Deliveries whose signature or timestamp did not verify. */
  readonly refused: number;
  /** Resolves once `predicate` holds for the deliveries received so far (checked on each arrival). */
  waitFor(predicate: (events: readonly WebhookEvent[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Closes the listener (the port refuses connections) until `start()`. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

export async function startWebhookReceiver(tls: { certFile: string; keyFile: string }): Promise<WebhookReceiver> {
  const cert = readFileSync(tls.certFile);
  const key = readFileSync(tls.keyFile);
  const deliveries: ReceivedDelivery[] = [];
  const held: ReceivedDelivery[] = [];
  const open = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  let refused = 0;
  let server: Server | undefined;
  let port = 0;

  const listen = async (): Promise<void> => {
    const s = createServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          const event = verifyWebhook(Buffer.concat(chunks), req.headers, receiver.secrets);
          if (receiver.hold) {
            held.push({ event, headers: req.headers });
            open.add(res);
            res.once('close', () => open.delete(res));
          } else {
            deliveries.push({ event, headers: req.headers });
            res.writeHead(receiver.answer).end();
          }
        } catch {
          refused += 1;
          res.writeHead(400).end();
        }
        for (const w of [...waiters]) w();
      });
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  await listen();

  const receiver: WebhookReceiver = {
    url: `https://127.0.0.1:${port}/hook`,
    secrets: [],
    answer: 204,
    deliveries,
    get refused() { return refused; },
    hold: false,
    held,
    waitFor: (predicate, what, timeoutMs) => waitOn(deliveries, predicate, what, timeoutMs),
    waitForHeld: (predicate, what, timeoutMs) => waitOn(held, predicate, what, timeoutMs),
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      for (const res of open) res.destroy();
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    start: listen,
  };
  function waitOn(list: readonly ReceivedDelivery[], predicate: (events: readonly WebhookEvent[]) => boolean, what: string,
    timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate(list.map((d) => d.event))) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; received ${JSON.stringify(list.map((d) => d.event.type))}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }
  return receiver;
}
