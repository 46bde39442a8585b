import { ConfigError, loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { KEYS_USAGE, runKeysRotate } from './keys-command.ts';
import { startPlatform } from './serve.ts';
import { runSubscriptionsCommand, SUBSCRIPTIONS_USAGE } from './subscriptions-command.ts';

const USAGE = `usage: rtc <command>

commands:
  serve          start every configured role (RTC_ROLES, default api,token)
${KEYS_USAGE}
${SUBSCRIPTIONS_USAGE}
  help           show this text

Configuration comes from RTC_* environment variables (see docs/operations/configuration.md).`;

async function serve(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const platform = await startPlatform(config, logger, (line) => process.stdout.write(`${line}\n`));

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn('grace period over: exiting with requests still open');
      logger.flush();
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    platform.close().then(
      () => {
        logger.info('stopped');
        logger.flush(() => process.exit(0));
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        logger.flush(() => process.exit(1));
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, sub] = argv;
  if (command === 'serve') {
    await serve();
    return -1;
  }
  if (command === 'subscriptions') {
    return runSubscriptionsCommand(argv.slice(1), loadConfig(process.env), { nowMs: () => Date.now() }, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  }
  if (command === 'keys' && sub === 'rotate') {
    return runKeysRotate(loadConfig(process.env), { nowMs: () => Date.now() }, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(`rtc: unknown command ${JSON.stringify(argv.join(' '))}\n\n${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(`rtc: ${err.message}\n`);
    // an operating-system refusal (port taken, file missing or unreadable) is the operator's to fix, not a bug
    else if (err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string') process.stderr.write(`rtc: ${err.message}\n`);
    else process.stderr.write(`rtc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
