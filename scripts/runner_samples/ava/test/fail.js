import test from 'ava';
const add = (a, b) => a + b;
test('adds', t => { t.is(add(2, 3), 5); });
test('adds wrongly', t => { t.is(add(2, 2), 5); });
test('adds wrongly again', t => { t.is(add(1, 1), 3); });
