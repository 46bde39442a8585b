import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { CLIENT_COMMANDS, CLIENT_NOTES, CLIENT_USAGE, type ClientIO } from './client/commands.ts';
import type { InterruptSignal } from './client/common.ts';
import { CommandError } from './client/http.ts';
import { readPassword } from './client/password.ts';

// the operator commands load the server (store, HTTP framework) only when they run: the client
// commands start quickly
const operator = async () => {
  const [config, log, keys, serveModule, subscriptions] = await Promise.all([
    import('../config.ts'), import('../log.ts'), import('./keys-command.ts'), import('./serve.ts'), import('./subscriptions-command.ts'),
  ]);
  return { ...config, ...log, ...keys, ...serveModule, ...subscriptions };
};

const usage = async (): Promise<string> => {
  const { DEFAULT_ROLES, KEYS_USAGE, SUBSCRIPTIONS_USAGE } = await operator();
  return `usage: rtc <command> [flags]

operator commands (run where the platform runs; configuration from RTC_* variables,
see docs/operations/configuration.md):
  serve          start every configured role (RTC_ROLES, default ${DEFAULT_ROLES.join(',')})
${KEYS_USAGE}
${SUBSCRIPTIONS_USAGE}

client commands (talk to a running platform over its public HTTP API, see docs/reference/cli.md):
${CLIENT_USAGE}

  help [COMMAND], COMMAND --help   show this text, or the command's part of it
  --version      print the version`;
};

/**
 * The help of one command: its entries of the usage (an entry is a line indented two spaces and
 * the more indented lines after it), only those of the subcommand when it has entries of its own
 * (`rtc webhooks create --help`); for `serve`, also every variable it reads. Undefined: no such command.
 */
const commandUsage = async (command: string, sub?: string): Promise<string | undefined> => {
  const { SERVE_VARIABLES } = await operator();
  const lines = (await usage()).split('\n');
  const entries: string[][] = [];
  let inEntry = false;
  for (const line of lines) {
    if (/^ {2}\S/.test(line)) {
      inEntry = line.slice(2).split(/\s/, 1)[0] === command;
      if (inEntry) entries.push([]);
    } else if (!/^ {3,}\S/.test(line)) inEntry = false;
    if (inEntry) entries.at(-1)?.push(line);
  }
  if (entries.length === 0) return undefined;
  const own = entries.filter((entry) => sub !== undefined && entry[0]?.slice(2).split(/\s+/, 2)[1] === sub);
  const picked = (own.length > 0 ? own : entries).flat();
  if (command === 'serve') {
    picked.push('', 'reads (docs/operations/configuration.md):', ...wrap(SERVE_VARIABLES.join(' '), 96).map((l) => `  ${l}`));
  } else if (command in CLIENT_COMMANDS) {
    const note = CLIENT_NOTES[command];
    if (note) picked.push(`  ${note}`);
    picked.push('  Every client command takes --json for machine-readable output.');
  }
  return `usage: rtc ${own.length > 0 ? `${command} ${sub}` : command} …\n${picked.join('\n')}`;
};

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out;
}

/** The version of the package this file belongs to (the nearest package.json above it). */
function version(): string {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'rtc-platform' && manifest.version) return manifest.version;
    } catch {
      // not here: one directory up
    }
  }
  return 'unknown';
}

/** Where `rtc` reads and writes, the signals it hears and how it ends at once: the process's own in `cli.ts`. */
export interface RtcIO {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Standard input: the password of `rtc login` when it is not a terminal. */
  readonly stdin: Readable & { readonly isTTY?: boolean };
  /** Standard error is a terminal: `rtc load-test` draws its progress in place. */
  readonly stderrIsTTY: boolean;
  /** Calls `handler` on SIGINT and SIGTERM until the returned function is called. */
  readonly onSignal: (handler: (signal: InterruptSignal) => void) => () => void;
  /** Ends at once with this code (a second signal, a shutdown past its grace period). */
  readonly exit: (code: number) => void;
}

const OPERATOR_COMMANDS = new Set(['serve', 'keys', 'subscriptions']);

async function serve(io: RtcIO): Promise<void> {
  const { createLogger, loadConfig, startPlatform } = await operator();
  const config = loadConfig(io.env);
  const { workerIndex } = config.media;
  // a media worker's logs carry its index (docs/operations/scale-out.md, "Every core of one machine")
  const logger = workerIndex === undefined ? createLogger(config.logLevel) : createLogger(config.logLevel).child({ worker: workerIndex });
  type Platform = Awaited<ReturnType<typeof startPlatform>>;
  let platform: Platform | undefined = undefined;
  let stopping = false;

  const shutDown = (running: Platform): void => {
    const force = setTimeout(() => {
      logger.warn('grace period over: exiting with requests still open');
      logger.flush();
      io.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    running.close().then(
      () => {
        logger.info('stopped');
        logger.flush(() => io.exit(0));
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        logger.flush(() => io.exit(1));
      },
    );
  };
  const stop = (signal: InterruptSignal | 'disconnect'): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // a signal during the start is honoured once the start is over
    if (platform) shutDown(platform);
  };
  // before the start: a signal that follows the role lines at once must find its handler
  io.onSignal(stop);
  // a worker whose rtc serve is gone (killed) drains and exits rather than serve unsupervised
  if (workerIndex !== undefined) process.on('disconnect', () => stop('disconnect'));
  platform = await startPlatform(config, logger, (line) => io.stdout(`${line}\n`));
  if (stopping) shutDown(platform);
}

async function main(argv: readonly string[], io: RtcIO): Promise<number> {
  const [command, sub] = argv;
  if (command === '--version' || command === '-v' || command === 'version') {
    io.stdout(`${version()}\n`);
    return 0;
  }
  const known = command !== undefined && (OPERATOR_COMMANDS.has(command) || command in CLIENT_COMMANDS);
  // help asked anywhere on the line prints help and does nothing else (rtc serve --help starts nothing)
  if (command === 'help' || command === '--help' || command === '-h' || (known && (argv.includes('--help') || argv.includes('-h')))) {
    const [about, aboutSub] = command === 'help' ? [sub, argv[2]] : known ? [command, sub] : [undefined, undefined];
    io.stdout(`${(about !== undefined && await commandUsage(about, aboutSub)) || await usage()}\n`);
    return 0;
  }
  const client = command === undefined ? undefined : CLIENT_COMMANDS[command];
  if (client) return client(argv.slice(1), clientIO(io));
  if (command === 'serve') {
    try {
      parseArgs({ args: argv.slice(1), options: {}, strict: true, allowPositionals: false });
    } catch (err) {
      io.stderr(`rtc: serve: ${(err as Error).message.split('\n')[0] ?? ''} (serve takes no flags: it reads RTC_* variables)\n`);
      return 2;
    }
    await serve(io);
    return -1;
  }
  const { loadConfig, runKeysRotate, runSubscriptionsCommand } = await operator();
  if (command === 'subscriptions') {
    return runSubscriptionsCommand(argv.slice(1), loadConfig(io.env), { nowMs: () => Date.now() }, {
      out: (line) => io.stdout(`${line}\n`),
      err: (line) => io.stderr(`${line}\n`),
    });
  }
  if (command === 'keys' && sub === 'rotate') {
    return runKeysRotate(loadConfig(io.env), { nowMs: () => Date.now() }, {
      out: (line) => io.stdout(`${line}\n`),
      err: (line) => io.stderr(`${line}\n`),
    });
  }
  if (command === undefined) {
    io.stdout(`${await usage()}\n`);
    return 2;
  }
  io.stderr(`rtc: unknown command ${JSON.stringify(argv.join(' '))}\n\n${await usage()}\n`);
  return 2;
}

function clientIO(io: RtcIO): ClientIO {
  return {
    env: io.env,
    out: (line) => io.stdout(`${line}\n`),
    err: (line) => io.stderr(`${line}\n`),
    readPassword: (prompt) => readPassword(prompt, io),
    nowSec: () => Math.floor(Date.now() / 1000),
    progress: { tty: io.stderrIsTTY, write: io.stderr },
    onSignal: io.onSignal,
    exit: io.exit,
  };
}

/**
 * Runs `rtc ARGV` with the given output and environment, and resolves with its exit code (-1: `serve`
 * started the platform, which keeps the process until a signal). A refusal is reported on `stderr`
 * as `rtc: <message>`, never thrown.
 */
export function runRtc(argv: readonly string[], io: RtcIO): Promise<number> {
  return main(argv, io).then(
    (code) => code,
    async (err: unknown) => {
      if (err instanceof CommandError) {
        io.stderr(`rtc: ${err.message}\n`);
        return err.exitCode;
      }
      const { ConfigError, PortInUseError } = await operator();
      if (err instanceof ConfigError || err instanceof PortInUseError) {
        for (const line of err.message.split('\n')) io.stderr(`rtc: ${line}\n`);
      }
      // an operating-system refusal (port taken, file missing or unreadable) is the operator's to fix, not a bug
      else if (err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string') io.stderr(`rtc: ${err.message}\n`);
      else io.stderr(`rtc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      return 1;
    },
  );
}
