import test from 'node:test';
import assert from 'node:assert';

test('adds', () => { assert.strictEqual(1 + 1, 3); });
test('subtracts', () => { assert.strictEqual(2 - 1, 1); });
