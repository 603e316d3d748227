const assert = require('assert');

describe('Math', function () {
  it('adds', function () { assert.strictEqual(1 + 1, 3); });
  it('multiplies', function () { assert.strictEqual(2 * 2, 5); });
  it('subtracts', function () { assert.strictEqual(2 - 1, 1); });
});
