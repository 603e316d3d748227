QUnit.module('broken calc');
const add = (a, b) => a + b;
QUnit.test('adds', assert => { assert.equal(add(2, 3), 5); });
QUnit.test('adds wrongly', assert => { assert.equal(add(2, 2), 5); });
