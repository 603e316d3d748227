QUnit.module('calc');
const add = (a, b) => a + b;
QUnit.test('adds', assert => { assert.equal(add(2, 3), 5); });
QUnit.test('adds negatives', assert => { assert.equal(add(-1, -1), -2); });
