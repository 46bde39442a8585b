/** A real HTTPS webhook receiver for tests: verifies every delivery with the server SDK and keeps the events. */
import { readFileSync } from 'node:fs';
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
          deliveries.push({ event, headers: req.headers });
          res.writeHead(receiver.answer).end();
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
    waitFor(predicate, what, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!predicate(deliveries.map((d) => d.event))) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; received ${JSON.stringify(deliveries.map((d) => d.event.type))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    start: listen,
  };
  return receiver;
}
