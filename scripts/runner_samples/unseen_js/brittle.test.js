// brittle sample: CALC_BROKEN=1 makes one test fail.
const test = require('brittle');
const add = (a, b) => (process.env.CALC_BROKEN ? a - b : a + b);
test('adds', (t) => { t.is(add(2, 3), 5); });
test('adds zero', (t) => { t.is(add(0, 0), 0); });
