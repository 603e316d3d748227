const test = require('tape');

test('arithmetic', (t) => {
  t.equal(1 + 1, 3, 'adds');
  t.equal(2 - 1, 1, 'subtracts');
  t.end();
});
