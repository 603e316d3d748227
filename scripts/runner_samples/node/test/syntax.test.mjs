import test from 'node:test';
test('broken', () => { (;
