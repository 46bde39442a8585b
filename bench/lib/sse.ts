/** The listeners of the signaling benches: an event stream read over node:http, frame by frame. */
import { request } from 'node:http';

/**
 * Opens `url`'s event stream (`/v1/signaling/events`) with `headers`, and resolves, once its
 * `ready` event arrived, with the function that closes it. Each later frame carrying a bench
 * message of the phase `phase()` names now is passed to `onMessage` with its send time `t`: a cheap
 * read of the two fields the benches need (the SDK parses the full JSON).
 */
export function openBenchStream(
  url: string, headers: Readonly<Record<string, string>>, phase: () => string, onMessage: (sentAtMs: number) => void,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/signaling/events`, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`event stream: ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let buffer = '';
      let ready = false;
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!ready && frame.includes('event: ready')) {
            ready = true;
            resolve(() => req.destroy());
            continue;
          }
          const phaseAt = frame.indexOf('"p":"');
          if (phaseAt === -1 || frame.slice(phaseAt + 5, frame.indexOf('"', phaseAt + 5)) !== phase()) continue;
          const tAt = frame.indexOf('"t":');
          onMessage(Number(frame.slice(tAt + 4, frame.indexOf(',', tAt))));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}
