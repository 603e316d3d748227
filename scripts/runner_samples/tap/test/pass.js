const t = require('tap');
t.equal(1 + 1, 2, 'adds');
t.ok('# fail 1'.length > 0, 'prints failure-looking text');
t.test('skipped', { skip: true }, (t) => t.end());
