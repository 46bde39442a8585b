/** What the rtc serve end-to-end tests share: the CLI run to its end, token issuance and grant checks, temporary directories. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import type { Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { ROOT } from '../helpers/platform.ts';

export const CLI = join(ROOT, 'server/src/main/cli.ts');
export const TOKEN_BODY = { room_id: 'room-1', user_id: 'user-1', role: 'speaker', publish_streams: [1] };

export interface CliResult { code: number | null; stdout: string; stderr: string }

/** Runs the `rtc` command to its end with only the given environment (and `input` on its standard input). */
export function runCli(args: readonly string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
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

export async function issue(host: string, customer: Customer): Promise<TokenResponse> {
  const res = await request(`${host}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: TOKEN_BODY });
  assert.equal(res.status, 200, res.text);
  return res.json<TokenResponse>();
}

export async function jwksOf(host: string): Promise<JSONWebKeySet> {
  const res = await request(`${host}/.well-known/jwks.json`);
  assert.equal(res.status, 200, res.text);
  return res.json<JSONWebKeySet>();
}

export async function verifyGrant(grant: string, jwks: JSONWebKeySet): Promise<void> {
  await jwtVerify(grant, createLocalJWKSet(jwks), { audience: 'rtc-media', typ: 'rtc-grant+jwt', algorithms: ['EdDSA'] });
}

/** A fresh temporary directory for each call, all removed after the enclosing describe block. */
export function useTempDirs(): () => string {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-serve-'));
    dirs.push(dir);
    return dir;
  };
}
