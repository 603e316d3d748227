const test = require('tape');
const lib = require('./missing-module');
test('x', (t) => { t.ok(lib); t.end(); });
