/** One HTTP request over node:http (not fetch, whose Sec-Fetch-Mode header marks it as a browser). */
import { request, type Agent } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
}

/** A JSON POST; `agent` keeps connections alive between requests (default: a connection each). */
export function postJson(url: string, body: string, headers: Readonly<Record<string, string>> = {}, agent: Agent | false = false): Promise<HttpAnswer> {
  return send('POST', url, body, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers }, agent);
}

export function getJson(url: string, headers: Readonly<Record<string, string>> = {}): Promise<HttpAnswer> {
  return send('GET', url, undefined, headers);
}

function send(
  method: string, url: string, body: string | undefined, headers: Readonly<Record<string, string>>, agent: Agent | false = false,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
