/** A raw TCP client of the platform's listeners: what it received, when the server closed it. */
import { connect, type Socket } from 'node:net';
import { MEDIA_PATH } from '@rtc/protocol';

/** A raw TCP client: what it received, and whether the server closed it. */
export class RawClient {
  readonly socket: Socket;
  readonly openedAt = Date.now();
  received = '';
  closedAt: number | undefined;
  /** Resolves when the connection is closed, with the time it had been open. */
  readonly closed: Promise<number>;
  private readonly waiters = new Set<() => void>();

  constructor(url: string, localAddress?: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect({ host: hostname, port: Number(port), ...(localAddress !== undefined && { localAddress }) });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.notify();
    });
    // a connection the server closes at accept can be reset rather than ended
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.once('close', () => {
      this.closedAt = Date.now();
      this.notify();
      resolve(this.closedAt - this.openedAt);
    }));
  }

  /** Resolves when what was received matches `pattern`; rejects if the connection closes first. */
  waitFor(pattern: RegExp, what: string): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(this.received);
        if (match) {
          this.waiters.delete(check);
          resolve(match);
        } else if (this.closedAt !== undefined) {
          this.waiters.delete(check);
          reject(new Error(`closed before ${what}; received ${JSON.stringify(this.received)}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Sends a request and resolves with the status of the response it starts. */
  async ask(raw: string): Promise<number> {
    const from = this.received.length;
    this.socket.write(raw);
    const match = await this.waitFor(new RegExp(`^[\\s\\S]{${from}}[\\s\\S]*?HTTP/1\\.1 (\\d{3}) `), 'a response');
    return Number(match[1]);
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

export const HEALTH = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
export const MEDIA_PLAIN = `GET ${MEDIA_PATH} HTTP/1.1\r\nHost: x\r\n\r\n`;
