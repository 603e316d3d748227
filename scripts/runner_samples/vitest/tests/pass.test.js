import { describe, it, expect } from 'vitest';

describe('math', () => {
  it('adds', () => { expect(1 + 2).toBe(3); });
  it('handles failure text', () => { expect('1 failed').toMatch(/failed/); });
  it.skip('skipped', () => { expect(1).toBe(2); });
  it.todo('later');
});
