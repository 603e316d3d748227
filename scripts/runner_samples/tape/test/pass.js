const test = require('tape');

test('arithmetic', (t) => {
  t.equal(1 + 1, 2, 'adds');
  t.ok('not ok'.includes('not'), 'handles failure text');
  t.end();
});
test('skipped', { skip: true }, (t) => { t.fail('no'); t.end(); });
test('todo', { todo: true }, (t) => { t.equal(1, 2, 'todo may fail'); t.end(); });
