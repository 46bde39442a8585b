/**
 * The `rtc` command run in this process (`runRtc`, what bin/rtc.mjs runs), with only the given
 * environment, its output kept, its standard input given, and the signals the test sends.
 */
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import type { InterruptSignal } from '../../server/src/main/client/common.ts';
import { runRtc } from '../../server/src/main/rtc-command.ts';

export interface RtcResult { code: number; stdout: string; stderr: string }

/** One run of `rtc` under way. */
export interface RtcRun {
  /** Delivers SIGINT or SIGTERM to the command, as the process would. */
  signal(signal: InterruptSignal): void;
  /** Resolves when standard error so far matches `pattern`; rejects if the command ends first. */
  stderrMatches(pattern: RegExp): Promise<void>;
  /** The exit code and everything written, once the command ends (or exits at once). */
  readonly result: Promise<RtcResult>;
}

/** Starts `rtc ARGS` with only `env` (and `input` on its standard input, else an empty one). */
export function startRtc(args: readonly string[], env: Record<string, string>, input?: string): RtcRun {
  let stdout = '';
  let stderr = '';
  const written = new EventEmitter();
  const signals = new EventEmitter();
  let exit: (code: number) => void = () => undefined;
  const exited = new Promise<number>((resolve) => { exit = resolve; });
  const code = runRtc(args, {
    env: { ...env },
    stdout: (text) => { stdout += text; },
    stderr: (text) => {
      stderr += text;
      written.emit('stderr');
    },
    stdin: Readable.from(input === undefined ? [] : [Buffer.from(input)]),
    stderrIsTTY: false,
    onSignal: (handler) => {
      signals.on('signal', handler);
      return () => signals.off('signal', handler);
    },
    exit,
  });
  const result = Promise.race([code, exited]).then((c) => {
    written.emit('end');
    return { code: c, stdout, stderr };
  });
  return {
    signal: (signal) => signals.emit('signal', signal),
    stderrMatches: (pattern) => new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(stderr)) return;
        written.off('stderr', check);
        resolve();
      };
      written.on('stderr', check);
      written.once('end', () => reject(new Error(`ended before ${String(pattern)}: ${stderr}`)));
      check();
    }),
    result,
  };
}

/** Runs `rtc ARGS` to its end with only `env` (and `input` on its standard input). */
export function runRtcInProcess(args: readonly string[], env: Record<string, string>, input?: string): Promise<RtcResult> {
  return startRtc(args, env, input).result;
}
