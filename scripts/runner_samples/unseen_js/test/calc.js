// @hapi/lab sample: CALC_BROKEN=1 makes one test fail.
const Code = require('@hapi/code');
const Lab = require('@hapi/lab');
const { expect } = Code;
const { it } = exports.lab = Lab.script();
const add = (a, b) => (process.env.CALC_BROKEN ? a - b : a + b);
it('adds', () => { expect(add(2, 3)).to.equal(5); });
it('adds zero', () => { expect(add(0, 0)).to.equal(0); });
