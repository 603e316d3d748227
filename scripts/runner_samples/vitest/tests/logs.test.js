import { it, expect } from 'vitest';
it('prints failure words', () => {
  console.log(' FAIL  fake.test.js > nothing');
  console.error('Error: simulated failure text');
  expect(true).toBe(true);
});
