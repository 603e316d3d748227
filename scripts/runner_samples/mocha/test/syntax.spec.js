const assert = require('assert');
describe('broken', function () {
  it('x', function () { assert.ok(true; });
});
