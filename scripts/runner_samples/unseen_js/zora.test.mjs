// zora sample: CALC_BROKEN=1 makes one test fail.
import { test } from 'zora';
const add = (a, b) => (process.env.CALC_BROKEN ? a - b : a + b);
test('adds', (t) => { t.eq(add(2, 3), 5); });
test('adds zero', (t) => { t.eq(add(0, 0), 0); });
