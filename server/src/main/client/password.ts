import type { Readable } from 'node:stream';
import { CommandError } from './http.ts';

/** Where a password comes from: standard input (a terminal or not) and standard error for the prompt. */
export interface PasswordSource {
  readonly stdin: Readable & { readonly isTTY?: boolean };
  readonly stderr: (text: string) => void;
}

/** Reads a password: on a terminal without echo, otherwise the first line of standard input. */
export async function readPassword(prompt: string, source: PasswordSource): Promise<string> {
  const input = source.stdin;
  if (input.isTTY !== true) {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer | string));
    return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '');
  }
  const terminal = input as NodeJS.ReadStream;
  source.stderr(prompt);
  terminal.setRawMode(true);
  terminal.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (chunk: Buffer): void => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            terminal.off('data', onData);
            source.stderr('\n');
            resolve(typed);
            return;
          }
          if (ch === '\u0003') {
            terminal.off('data', onData);
            source.stderr('\n');
            reject(new CommandError('interrupted', 130));
            return;
          }
          if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      terminal.on('data', onData);
    });
  } finally {
    terminal.setRawMode(false);
    terminal.pause();
  }
}
