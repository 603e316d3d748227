const assert = require('assert');

describe('Array', function () {
  it('indexOf returns -1 when missing', function () {
    assert.strictEqual([1, 2, 3].indexOf(4), -1);
  });
  it('should handle failure messages', function () {
    assert.ok('2 failing'.includes('failing'));
  });
  it('pending test');
  it.skip('skipped test', function () { assert.fail('no'); });
});
