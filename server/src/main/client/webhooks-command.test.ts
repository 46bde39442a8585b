import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { table } from './webhooks-command.ts';

describe('rtc webhooks tables', () => {
  it('pads every column but the last to its widest cell, two spaces apart', () => {
    assert.deepEqual(table(['ID', 'STATUS', 'URL'], [['wh_1', 'enabled', 'https://a.example/x'], ['wh_22', 'disabled', 'https://b']]), [
      'ID     STATUS    URL',
      'wh_1   enabled   https://a.example/x',
      'wh_22  disabled  https://b',
    ]);
  });

  it('leaves no trailing spaces when the last cells are empty', () => {
    assert.deepEqual(table(['ID', 'LAST ERROR'], [['dlv_1', '']]), ['ID     LAST ERROR', 'dlv_1']);
  });
});
