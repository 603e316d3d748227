import test from 'node:test';
import assert from 'node:assert';

test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('handles failure text', () => { assert.match('not ok 3', /not ok/); });
test('skipped', { skip: 'not yet' }, () => { assert.fail(); });
test('todo item', { todo: true }, () => { assert.fail('todo failing is fine'); });
