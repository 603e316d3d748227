import test from 'ava';
const add = (a, b) => a + b;
test('adds', t => { t.is(add(2, 3), 5); });
test('adds negatives', t => { t.is(add(-1, -1), -2); });
test.skip('multiplies', t => { t.is(2 * 3, 6); });
