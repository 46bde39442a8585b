/** What the rtc serve end-to-end tests share: the CLI run to its end, token issuance and grant checks, temporary directories. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers/root.ts';

export { TOKEN_BODY, issue, jwksOf, useTempDirs, verifyGrant } from '../helpers/grant-checks.ts';

export const CLI = join(ROOT, 'server/src/main/cli.ts');
/** The installed command: it runs the build (dist/). */
export const BIN = join(ROOT, 'bin/rtc.mjs');

export interface CliResult { code: number | null; stdout: string; stderr: string }

/** Runs the `rtc` command to its end with only the given environment (and `input` on its standard input). */
export function runCli(args: readonly string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  return runProcess(['--import', 'tsx', CLI, ...args], env, input);
}

/** Runs bin/rtc.mjs, the command as installed, like runCli. */
export function runBin(args: readonly string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  return runProcess([BIN, ...args], env, input);
}

function runProcess(nodeArgs: readonly string[], env: Record<string, string>, input: string | undefined): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, {
      cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
    child.stderr!.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}
