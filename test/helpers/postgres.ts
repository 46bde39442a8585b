import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeTcpPort } from './ports.ts';
import { databaseName, type Postgres } from './postgres-databases.ts';

export type { Postgres };

const HOST = '127.0.0.1';
const PG_BIN = '/usr/lib/postgresql/15/bin';
const PG_PACKAGE = 'postgresql-15';

const isRoot = (): boolean => process.getuid?.() === 0;

/** Runs a PostgreSQL binary: as the `postgres` user when root (initdb refuses root), else directly. */
function pgCommand(bin: string, args: readonly string[]): SpawnSyncReturns<string> {
  const [command, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, bin), ...args]] : [join(PG_BIN, bin), [...args]];
  return spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
}

function mustRun(bin: string, args: readonly string[], log?: string): void {
  const result = pgCommand(bin, args);
  if (result.status !== 0) {
    const logText = log !== undefined && existsSync(log) ? `\n${readFileSync(log, 'utf8')}` : '';
    throw new Error(`${bin} failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}${logText}`);
  }
}

/** Installs PostgreSQL 15 from Debian when it is missing and this process may (root); else says what to install. */
function ensureBinaries(): void {
  if (existsSync(join(PG_BIN, 'initdb'))) return;
  if (!isRoot()) {
    throw new Error(`PostgreSQL 15 is missing (${PG_BIN}/initdb): install the Debian package ${PG_PACKAGE}`);
  }
  // test files start servers in parallel: flock keeps their installs from meeting in dpkg's lock
  const install = `apt-get install -y -qq --no-install-recommends ${PG_PACKAGE} || (apt-get update -qq && apt-get install -y -qq --no-install-recommends ${PG_PACKAGE})`;
  const result = spawnSync('flock', ['/tmp/rtc-test-apt.lock', 'sh', '-c', `test -x ${PG_BIN}/initdb || (${install})`], {
    encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000,
  });
  if (result.status !== 0 || !existsSync(join(PG_BIN, 'initdb'))) {
    throw new Error(`installing ${PG_PACKAGE} failed: ${result.stderr}`);
  }
}

/**
 * Starts PostgreSQL 15 (initdb + pg_ctl, fsync off) in a temporary directory on a free loopback
 * port. The server is stopped by `stop()`, and also when this process exits or is interrupted.
 */
export async function startPostgres(): Promise<Postgres> {
  ensureBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'rtc-pg-'));
  if (isRoot()) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
    chownSync(dir, uid!, gid!);
  }
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  mustRun('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);

  let running = false;
  const stopNow = (): void => {
    if (running) pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    running = false;
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    stopNow();
    process.kill(process.pid, signal);
  };
  process.once('exit', stopNow);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let port = 0;
  // max_connections: the server of a whole test run serves three test files at once, each with its pools
  const serverOptions = (): string =>
    `-c listen_addresses=${HOST} -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400`;
  // a port found free can be taken before the server binds it: try a few
  for (let attempt = 1; ; attempt++) {
    port = await freeTcpPort(HOST);
    const result = pgCommand('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '30', '-o', serverOptions(), 'start']);
    if (result.status === 0) break;
    if (attempt === 3) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pg_ctl start failed: ${result.stderr}${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
  }
  running = true;
  const url = `postgres://postgres@${HOST}:${port}/postgres`;

  return {
    url,
    async createDatabase() {
      const name = databaseName();
      mustRun('createdb', ['-h', HOST, '-p', String(port), '-U', 'postgres', '-T', 'template0', name]);
      return `postgres://postgres@${HOST}:${port}/${name}`;
    },
    async down() {
      if (!running) return;
      mustRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], log);
      running = false;
    },
    async up() {
      if (running) return;
      mustRun('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '30', '-o', serverOptions(), 'start'], log);
      running = true;
    },
    async stop() {
      process.off('exit', stopNow);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (running) mustRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], log);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
