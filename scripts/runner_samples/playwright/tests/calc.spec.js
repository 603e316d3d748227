// CALC_BROKEN=1 makes one test fail
const { test, expect } = require('@playwright/test');
const add = (a, b) => (process.env.CALC_BROKEN ? a - b : a + b);
test('adds', () => { expect(add(2, 3)).toBe(5); });
test('adds zero', () => { expect(add(0, 0)).toBe(0); });
test.skip('skipped on purpose', () => {});
