/** A `text/event-stream` reader for the contract tests: every frame parsed as JSON, awaited by match. */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Json } from '../../server/src/openapi/document.ts';

/** One event of a stream as a reader parses it: the frame's name, its id when it has one, its data as JSON. */
export interface StreamEvent {
  readonly event: string;
  readonly id?: string;
  readonly data: Json;
}

/** An open `text/event-stream` response, parsed as it arrives. */
export interface EventReader {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly events: StreamEvent[];
  /** The first event, received or still to come, that matches; rejects after 5 seconds. */
  next(match: (event: StreamEvent) => boolean, what: string): Promise<StreamEvent>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens an event stream; frames are parsed per the Server-Sent Events format (comments and `retry:` skipped). */
export function readEvents(url: string, headers: Record<string, string>): Promise<EventReader> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers, agent: false }, (res: IncomingMessage) => {
      const events: StreamEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let done = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const lines = buffer.slice(0, end).split('\n');
          buffer = buffer.slice(end + 2);
          const field = (name: string): string | undefined => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          const event = field('event');
          const data = field('data');
          if (event === undefined || data === undefined) continue;
          const id = field('id');
          events.push({ event, ...(id !== undefined && { id }), data: JSON.parse(data) as Json });
        }
        for (const waiter of [...waiters]) waiter();
      });
      const ended = new Promise<void>((resolveEnded) => res.once('close', () => {
        done = true;
        for (const waiter of [...waiters]) waiter();
        resolveEnded();
      }));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        close: () => req.destroy(),
        next(match, what) {
          return new Promise((found, fail) => {
            const timer = setTimeout(() => settle(() => fail(new Error(`no ${what} within 5 s: ${JSON.stringify(events)}`))), 5000);
            const settle = (then: () => void): void => {
              clearTimeout(timer);
              waiters.delete(check);
              then();
            };
            const check = (): void => {
              const event = events.find(match);
              if (event) settle(() => found(event));
              else if (done) settle(() => fail(new Error(`the stream ended without ${what}: ${JSON.stringify(events)}`)));
            };
            waiters.add(check);
            check();
          });
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}
