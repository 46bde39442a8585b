import { CommandError } from './http.ts';

/** Reads a password: on a terminal without echo, otherwise the first line of standard input. */
export async function readPassword(prompt: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(chunk as Buffer);
    return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '');
  }
  process.stderr.write(prompt);
  input.setRawMode(true);
  input.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (chunk: Buffer): void => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            input.off('data', onData);
            process.stderr.write('\n');
            resolve(typed);
            return;
          }
          if (ch === '\u0003') {
            input.off('data', onData);
            process.stderr.write('\n');
            reject(new CommandError('interrupted', 130));
            return;
          }
          if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
  }
}
