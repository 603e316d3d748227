import { test } from 'uvu';
import * as assert from 'uvu/assert';
const add = (a, b) => a + b;
test('adds', () => { assert.is(add(2, 3), 5); });
test('adds wrongly', () => { assert.is(add(2, 2), 5); });
test.run();
