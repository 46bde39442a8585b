/**
 * The standard-error destination of the logger (log.ts): the lines of one turn go out together at
 * its end, in order, and `flush` writes what waits at once. A file stands in for standard error.
 */
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLogger, stderrDestination } from './log.ts';

const dir = mkdtempSync(join(tmpdir(), 'log-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function destinationFile(name: string): { fd: number; read(): string } {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  after(() => closeSync(fd));
  return { fd, read: () => readFileSync(path, 'utf8') };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the logger\'s standard-error destination', () => {
  it('writes the lines of one turn together at its end, in order, and each line once', async () => {
    const file = destinationFile('turn.log');
    const logger = createLogger('info', stderrDestination(file.fd));
    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2 }, 'second');
    assert.equal(file.read(), '', 'nothing is written in the turn that logs');
    await nextTurn();
    const lines = file.read().trim().split('\n').map((l) => JSON.parse(l) as { msg: string; n: number });
    assert.deepEqual(lines.map((l) => [l.msg, l.n]), [['first', 1], ['second', 2]]);
    logger.info('third');
    await nextTurn();
    await nextTurn();
    assert.deepEqual(file.read().trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg), ['first', 'second', 'third']);
  });

  it('writes what waits at once on flush, and a turn\'s lines past 64 KiB without waiting for its end', async () => {
    const file = destinationFile('flush.log');
    const destination = stderrDestination(file.fd);
    const logger = createLogger('info', destination);
    logger.info('before the flush');
    destination.flush();
    assert.match(file.read(), /before the flush/);
    const long = 'x'.repeat(1024);
    for (let i = 0; i < 80; i++) logger.info({ i, long }, 'bulk');
    const written = file.read().trim().split('\n').length;
    assert.ok(written > 1 && written < 81, `a full batch went out in the turn (${written} lines)`);
    await nextTurn();
    assert.equal(file.read().trim().split('\n').length, 81);
  });
});
